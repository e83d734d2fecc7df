// Which state events end their lane.
#include "timeline/timeline_event.h"

namespace ddplaunch::timeline {

bool ends_lane(const Event& event) {
  if (event.type != EventType::State) return false;
  return event.name == "ended" || event.name.rfind("exited:", 0) == 0 || event.name.rfind("killed:", 0) == 0;
}

}  // namespace ddplaunch::timeline
