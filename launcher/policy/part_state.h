// The classes the job policy is made of — rank phases, the peer probe's round, membership —
// field by field, for the state document (policy_state.h). Each befriends its StateFields.
#pragma once

#include "policy/init_tracker.h"
#include "policy/membership.h"
#include "policy/probe_round.h"
#include "policy/record_state.h"

namespace ddplaunch {

template <>
struct StateFields<InitTracker> {
  template <class Io, class Self>
  static void list(Io& io, Self& t) {
    io("ranks", t.ranks_);
  }
};

template <>
struct StateFields<ProbeRound> {
  template <class Io, class Self>
  static void list(Io& io, Self& p) {
    io("active", p.active_);
    io("generation", p.generation_);
    io("started", p.started_);
    io("offers", p.offers_);
    io("reported", p.reported_);
    io("links", p.links_);
  }
};

// Its settings are not saved: the restoring coordinator brings its own (policy_state.h).
template <>
struct StateFields<Membership> {
  template <class Io, class Self>
  static void list(Io& io, Self& m) {
    io("members", m.members_);
    io("started", m.started_);
    io("min_reached_at", m.min_reached_at_);
    io("waiting_until", m.waiting_until_);
    io("changes", m.changes_);
    io("cooldowns", m.cooldowns_);
  }
};

}  // namespace ddplaunch
