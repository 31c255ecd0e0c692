#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <vector>

namespace seedance::sim {

// What happens at an instant of simulated time. The enumerator value is the priority among
// events at the same time: arrivals are seen before the decision they may take part in.
enum class EventKind : std::uint8_t {
  kArrival = 0,   // a job arrives (index = the job's position in the workload)
  kRoundEnd = 1,  // the running round ends: progress is applied, the next round is decided
  kTick = 2,      // nothing runs, but capacity is held or forecast: the autoscaler looks again
};

struct Event {
  double time_s = 0;
  EventKind kind = EventKind::kArrival;
  std::uint64_t seq = 0;   // insertion order: the last tie-break, so the order is total
  std::size_t index = 0;   // payload (job index for arrivals)
};

// EventQueue: the simulator's future, ordered by (time, priority, sequence) — a total order, so
// two runs pop events in exactly the same order. Not thread-safe.
class EventQueue {
 public:
  void Push(double time_s, EventKind kind, std::size_t index = 0) {
    heap_.push(Event{time_s, kind, next_seq_++, index});
  }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  // REQUIRES: !empty().
  const Event& Top() const { return heap_.top(); }
  Event Pop() {
    Event e = heap_.top();
    heap_.pop();
    return e;
  }

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      if (a.time_s != b.time_s) return a.time_s > b.time_s;
      if (a.kind != b.kind) return a.kind > b.kind;
      return a.seq > b.seq;
    }
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace seedance::sim
