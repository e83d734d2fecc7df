// ProgressCountingGloo: gloo's collectives, each counted as progress once it completes, and
// the time from its issue to its completion as time in flight (waiting, for the straggler watch).
#include "progress_counting_gloo.h"

#include "ddplaunch/shim.h"

namespace ddplaunch::shim {

namespace {
// Issues the collective and counts it when its work completes (gloo's worker thread runs the
// callback); a work without a future (none of gloo's collectives today) counts when it is
// issued. A collective whose issue throws ends its time in flight and is not progress.
template <typename Issue>
c10::intrusive_ptr<c10d::Work> counted(Issue issue) {
  collective_started();
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = issue();
  } catch (...) {
    collective_failed();
    throw;
  }
  try {
    work->getFuture()->addCallback([](c10::ivalue::Future&) { collective_completed(); });
  } catch (...) {
    collective_completed();
  }
  return work;
}
}  // namespace

using Base = c10d::ProcessGroupGloo;

c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::broadcast(std::vector<at::Tensor>& tensors,
                                                               const c10d::BroadcastOptions& opts) {
  return counted([&] { return Base::broadcast(tensors, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::allreduce(std::vector<at::Tensor>& tensors,
                                                               const c10d::AllreduceOptions& opts) {
  return counted([&] { return Base::allreduce(tensors, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  return counted([&] { return Base::allreduce_coalesced(tensors, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::reduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::ReduceOptions& opts) {
  return counted([&] { return Base::reduce(tensors, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                               std::vector<at::Tensor>& inputs,
                                                               const c10d::AllgatherOptions& opts) {
  return counted([&] { return Base::allgather(outputs, inputs, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                     const c10d::AllgatherOptions& opts) {
  return counted([&] { return Base::_allgather_base(output, input, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::GatherOptions& opts) {
  return counted([&] { return Base::gather(outputs, inputs, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::scatter(std::vector<at::Tensor>& outputs,
                                                             std::vector<std::vector<at::Tensor>>& inputs,
                                                             const c10d::ScatterOptions& opts) {
  return counted([&] { return Base::scatter(outputs, inputs, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                    std::vector<std::vector<at::Tensor>>& inputs,
                                                                    const c10d::ReduceScatterOptions& opts) {
  return counted([&] { return Base::reduce_scatter(outputs, inputs, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                   std::vector<int64_t>& output_counts,
                                                                   std::vector<int64_t>& input_counts,
                                                                   const c10d::AllToAllOptions& opts) {
  return counted([&] { return Base::alltoall_base(output, input, output_counts, input_counts, opts); });
}
c10::intrusive_ptr<c10d::Work> ProgressCountingGloo::barrier(const c10d::BarrierOptions& opts) {
  return counted([&] { return Base::barrier(opts); });
}

}  // namespace ddplaunch::shim
