use super::*;

/// A scheduler with `QpWake`s for (time, qp) scheduled in this order.
fn wakes(plan: &[(u64, u32)]) -> Scheduler {
    let mut s = Scheduler::new();
    for &(t, qp) in plan {
        s.at(Ps(t), Event::QpWake { qp });
    }
    s
}

/// The (time, qp) of the `QpWake`s taken until the next is after `limit`.
fn take_wakes(s: &mut Scheduler, limit: u64) -> Vec<(u64, u32)> {
    std::iter::from_fn(|| s.pop_until(Ps(limit)))
        .map(|(t, e)| match e {
            Event::QpWake { qp } => (t.0, qp),
            _ => unreachable!(),
        })
        .collect()
}

#[test]
fn equal_times_run_in_insertion_order() {
    let mut s = wakes(&[(10, 1), (5, 0), (10, 2), (10, 3)]);
    let order = take_wakes(&mut s, u64::MAX);
    assert_eq!(order, [(5, 0), (10, 1), (10, 2), (10, 3)]);
    assert_eq!(s.executed(), 4);
    assert_eq!(s.now(), Ps(10));
}

/// Equal-time events run by origin, then in their origin's order,
/// whatever order the origins took turns in: the order that two parts
/// of a run, each running some of the origins, agree on.
#[test]
fn equal_times_run_by_origin_then_in_its_order() {
    let order = |plan: &[(u32, u32)]| {
        let mut s = Scheduler::new();
        for &(origin, qp) in plan {
            s.set_origin(origin);
            s.at(Ps(5), Event::QpWake { qp });
        }
        s.set_origin(1);
        s.at(Ps(5), Event::Sample);
        std::iter::from_fn(|| s.pop())
            .map(|(_, e)| match e {
                Event::QpWake { qp } => qp,
                _ => 0,
            })
            .collect::<Vec<_>>()
    };
    let a = order(&[(2, 10), (1, 11), (2, 12), (1, 13), (0, 14)]);
    let b = order(&[(1, 11), (1, 13), (0, 14), (2, 10), (2, 12)]);
    // The sample is the run's (origin 0), after the run's own wake-up.
    assert_eq!(a, [14, 0, 11, 13, 10, 12]);
    assert_eq!(a, b);
}

/// Arrivals through lanes come out in exactly the order (time, then
/// insertion) the heap alone gives them, mixed with other events,
/// including an arrival that overtakes its lane.
#[test]
fn lanes_keep_the_heaps_order() {
    let plan: Vec<(u64, Event)> = (0..400u32)
        .map(|i| {
            let t = u64::from(i / 3) * 7 + u64::from(i * i % 11);
            let ev = match i % 4 {
                0 => Event::QpWake { qp: i },
                _ => Event::Arrive {
                    port: i % 3,
                    pkt: PacketId::from_index(i),
                },
            };
            (t, ev)
        })
        .collect();
    let (mut lanes, mut heap) = (Scheduler::new(), Scheduler::new());
    for &(t, ev) in &plan {
        heap.at(Ps(t), ev);
        match ev {
            Event::Arrive { port, pkt } => lanes.arrive(Ps(t), port, pkt),
            _ => lanes.at(Ps(t), ev),
        }
    }
    assert!(lanes.heap.len() < heap.heap.len() / 2);
    assert_eq!(lanes.pending(), plan.len());
    let all = |s: &mut Scheduler| std::iter::from_fn(|| s.pop()).collect::<Vec<_>>();
    let (a, b) = (all(&mut lanes), all(&mut heap));
    assert_eq!(a.len(), plan.len());
    assert_eq!(a, b);
    assert_eq!(lanes.pending(), 0);
}

/// Near and far events, scheduled while the clock moves, come out in
/// (time, insertion) order.
#[test]
fn the_far_heap_keeps_the_order() {
    let mut s = Scheduler::new();
    let mut expect = Vec::new();
    let mut seq = 0u64;
    let mut schedule = |s: &mut Scheduler, t: u64, qp: u32, expect: &mut Vec<_>| {
        s.at(Ps(t), Event::QpWake { qp });
        expect.push((t, seq, qp));
        seq += 1;
    };
    for i in 0..50u32 {
        // 0..100 us ahead, on both sides of the horizon.
        schedule(&mut s, u64::from(i * 7919 % 97) * 1_000_000, i, &mut expect);
    }
    let mut got = Vec::new();
    while let Some((t, Event::QpWake { qp })) = s.pop() {
        got.push((t.0, qp));
        if qp < 2_000 {
            let now = t.0;
            for k in 0..2 {
                let delay = u64::from((qp * 31 + k) % 41) * 1_000_000;
                schedule(&mut s, now + delay, qp * 2 + 1_000 + k, &mut expect);
            }
        }
    }
    expect.sort();
    let want: Vec<_> = expect.iter().map(|&(t, _, qp)| (t, qp)).collect();
    assert_eq!(got, want);
}

/// A reserved event scheduled later runs where it would have run had
/// it been scheduled when reserved; one never scheduled leaves no
/// trace in the order of the others.
#[test]
fn a_reserved_event_keeps_its_place() {
    let run = |lazy: bool| {
        let mut s = Scheduler::new();
        s.at(Ps(10), Event::QpWake { qp: 0 });
        let early = s.reserve(Ps(30), &Event::TxDone { port: 7 });
        s.at(Ps(30), Event::QpWake { qp: 1 });
        let never = s.reserve(Ps(30), &Event::TxDone { port: 8 });
        s.at(Ps(30), Event::QpWake { qp: 2 });
        if !lazy {
            s.at_key(early, Event::TxDone { port: 7 });
            s.at_key(never, Event::TxDone { port: 8 });
        }
        let mut order = Vec::new();
        while let Some((t, ev)) = s.pop() {
            order.push((t.0, ev));
            if lazy && ev == (Event::QpWake { qp: 0 }) {
                // Scheduled at 10, after an event at 30 was: still first.
                assert!(early > s.current());
                s.at_key(early, Event::TxDone { port: 7 });
            }
        }
        order
    };
    let eager = run(false);
    let mut lazy = run(true);
    assert_eq!(
        lazy,
        [
            (10, Event::QpWake { qp: 0 }),
            (30, Event::TxDone { port: 7 }),
            (30, Event::QpWake { qp: 1 }),
            (30, Event::QpWake { qp: 2 }),
        ]
    );
    lazy.insert(3, (30, Event::TxDone { port: 8 }));
    assert_eq!(lazy, eager);
}

/// `pop_until` takes what is due by its limit, from either heap, in
/// order, and leaves the rest where it was.
#[test]
fn pop_until_stops_at_its_limit() {
    // qp 4 beyond the horizon: the far heap's.
    let mut s = wakes(&[(10, 1), (5, 0), (10, 2), (HORIZON.0 + 50, 4), (20, 3)]);
    assert_eq!(take_wakes(&mut s, 4), []);
    assert_eq!(take_wakes(&mut s, 10), [(5, 0), (10, 1), (10, 2)]);
    assert_eq!(s.now(), Ps(10));
    assert_eq!(s.pending(), 2);
    assert_eq!(take_wakes(&mut s, HORIZON.0 + 49), [(20, 3)]);
    assert_eq!(take_wakes(&mut s, u64::MAX), [(HORIZON.0 + 50, 4)]);
    assert_eq!(s.executed(), 5);
}

use proptest::prelude::*;

/// One step of a random schedule: what to do, and how far ahead.
#[derive(Debug, Clone)]
enum Op {
    At(u64),
    Arrive(u64, u32),
    /// Reserve a key; `schedule` it (now or later) or let it go.
    Reserve(u64, bool),
    Pop,
    PopUntil(u64),
}

fn delay() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        0u64..1_000,
        0u64..2_000_000,
        0u64..5_000_000_000,
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => delay().prop_map(Op::At),
        3 => (delay(), 0u32..4).prop_map(|(d, p)| Op::Arrive(d, p)),
        1 => (delay(), any::<bool>()).prop_map(|(d, k)| Op::Reserve(d, k)),
        4 => Just(Op::Pop),
        1 => delay().prop_map(Op::PopUntil),
    ]
}

proptest! {
    /// Whatever is scheduled, reserved, sent down lanes or taken, the
    /// events come out by (time, insertion): the order of a sorted map
    /// of every key handed out.
    #[test]
    fn events_come_out_in_key_order(ops in proptest::collection::vec(op(), 1..300)) {
        let mut s = Scheduler::new();
        let mut model = std::collections::BTreeMap::new();
        let mut seq = 0u64;
        let mut reserved = Vec::new();
        let mut next = 0u32;
        let key = |t: u64, seq: u64| (u128::from(t) << 64) | u128::from(seq);
        let check = |s: &mut Scheduler, model: &mut std::collections::BTreeMap<u128, Event>, limit: u64| {
            let want = model.first_key_value().map(|(&k, &e)| (k, e));
            let got = s.pop_until(Ps(limit));
            match want {
                Some((k, e)) if Scheduler::time_of(k).0 <= limit => {
                    prop_assert_eq!(got, Some((Scheduler::time_of(k), e)));
                    prop_assert_eq!(s.current(), k);
                    model.remove(&k);
                }
                _ => prop_assert_eq!(got, None),
            }
            prop_assert_eq!(s.pending(), model.len());
            Ok(())
        };
        for op in ops {
            let now = s.now().0;
            match op {
                Op::At(d) => {
                    let ev = Event::QpWake { qp: next };
                    s.at(Ps(now + d), ev);
                    model.insert(key(now + d, seq), ev);
                }
                Op::Arrive(d, port) => {
                    let ev = Event::Arrive { port, pkt: PacketId::from_index(next) };
                    s.arrive(Ps(now + d), port, PacketId::from_index(next));
                    model.insert(key(now + d, seq), ev);
                }
                Op::Reserve(d, keep) => {
                    let ev = Event::TxDone { port: next };
                    let k = s.reserve(Ps(now + d), &ev);
                    prop_assert_eq!(k, key(now + d, seq));
                    if keep {
                        reserved.push((k, ev));
                    }
                }
                Op::Pop => check(&mut s, &mut model, u64::MAX)?,
                Op::PopUntil(d) => check(&mut s, &mut model, now + d)?,
            }
            if !matches!(op, Op::Pop | Op::PopUntil(_)) {
                seq += 1;
                next += 1;
            }
            // Reserved keys not yet behind the clock are scheduled
            // when the op count says so.
            if next % 3 == 0 {
                for (k, ev) in reserved.drain(..) {
                    if k > s.current() {
                        s.at_key(k, ev);
                        model.insert(k, ev);
                    }
                }
            }
        }
        while !model.is_empty() {
            check(&mut s, &mut model, u64::MAX)?;
        }
        prop_assert_eq!(s.pop(), None);
    }
}

/// The run's very first key is 0 (time 0, the run's origin, count 0),
/// equal to `current` before anything is taken: an arrival there is
/// not behind the clock.
#[test]
fn first_event_may_be_an_arrival_at_zero() {
    let mut s = Scheduler::new();
    s.arrive(Ps(0), 0, PacketId::from_index(7));
    let got = s.pop();
    assert_eq!(
        got,
        Some((
            Ps(0),
            Event::Arrive {
                port: 0,
                pkt: PacketId::from_index(7)
            }
        ))
    );
}

#[test]
fn after_is_relative_to_now() {
    let mut s = Scheduler::new();
    s.at(Ps(100), Event::Sample);
    s.pop();
    s.after(Ps(5), Event::Sample);
    assert_eq!(s.peek_time(), Some(Ps(105)));
}
