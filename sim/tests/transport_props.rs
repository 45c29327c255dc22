//! Property tests of the RC transport over the loopback bench.
//!
//! 1. Under any loss pattern that still lets packets through (arbitrary
//!    drops in both directions during the first packets, then a clean
//!    path), every message completes exactly once, successfully, in order,
//!    and the responder executes each exactly once, in order, with the
//!    right length and immediate data.
//! 2. Under arbitrary loss (the same packet may be lost again and again),
//!    nothing is delivered twice or out of order: the requester completes
//!    a prefix of the messages successfully, then at most one error and
//!    flushes; the responder executed a prefix of the messages covering
//!    every success.
//! 3. When the path goes silent, the requester fails with RETRY_EXC_ERR
//!    after exactly `retry_cnt` retries of the oldest unacknowledged PSN,
//!    and flushes everything behind it.
//!
//! Both were checked to fail on deliberately broken rules (resending from
//! the PSN after the NAKed one; never clearing `nak_sent`; counting one
//! retry too many).

use proptest::prelude::*;
use roce_codec::Psn;
use rocesim::time::{Ps, Rate};
use rocesim::transport::loopback::{Dir, Loopback, Loss};
use rocesim::transport::{QpConfig, QpState, RcQp, Verb, WcStatus, WorkRequest};
use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

const VERBS: [Verb; 5] = [
    Verb::Write,
    Verb::WriteImm,
    Verb::Send,
    Verb::SendImm,
    Verb::Read,
];

fn bench(pmtu: u32, retry_cnt: u8, a_psn: u32, b_psn: u32, seed: u64) -> Loopback {
    let cfg = QpConfig {
        pmtu,
        // 4.096 us x 2^5 = 131 us: above the RTT plus a full window of
        // 4 KiB packets at 100G (~45 us), so no timeout is spurious.
        timeout: 5,
        retry_cnt,
        rnr_retry: 7,
        min_rnr_timer: 1,
        max_rd_atomic: 4,
        ..QpConfig::default()
    };
    let a = RcQp::new(0x200, 0x300, Psn::new(a_psn), Psn::new(b_psn), cfg);
    let b = RcQp::new(0x300, 0x200, Psn::new(b_psn), Psn::new(a_psn), cfg);
    Loopback::new(a, b, Rate::gbps(100), Ps::from_ns(700), seed)
}

/// Drops the packets the pattern marks, but never the same packet (same
/// opcode and PSN) twice: every loss is repaired by one resend, which is
/// what "a path that still lets packets through" means here.
fn pattern_loss(pattern: Vec<bool>) -> Loss {
    let mut lost = HashSet::new();
    Loss::Custom(Box::new(move |n, p| {
        pattern.get(n as usize).copied().unwrap_or(false)
            && lost.insert((p.bth.opcode.0, p.bth.psn.value()))
    }))
}

/// Drops exactly what the pattern marks, resends included.
fn raw_loss(pattern: Vec<bool>) -> Loss {
    Loss::Custom(Box::new(move |n, _| {
        pattern.get(n as usize).copied().unwrap_or(false)
    }))
}

prop_compose! {
    fn message()(verb in 0usize..5, len in prop_oneof![0u64..64, 0u64..20_000]) -> (Verb, u64) {
        (VERBS[verb], len)
    }
}

proptest! {
    #[test]
    fn every_message_completes_once_in_order(
        pmtu in prop_oneof![Just(256u32), Just(1024), Just(4096)],
        msgs in prop::collection::vec(message(), 1..24),
        a_psn in prop_oneof![0u32..0x100_0000, 0xFF_FF00u32..0x100_0000],
        b_psn in 0u32..0x100_0000,
        fwd in prop::collection::vec(prop::bool::weighted(0.15), 0..300),
        back in prop::collection::vec(prop::bool::weighted(0.15), 0..200),
        recv_delay_us in prop_oneof![Just(0u64), 1u64..100],
    ) {
        let mut lb = bench(pmtu, 7, a_psn, b_psn, 0);
        lb.set_loss(Dir::AtoB, pattern_loss(fwd));
        lb.set_loss(Dir::BtoA, pattern_loss(back));
        lb.b_mut().set_record_inbound(true);
        let recvs = msgs.iter().filter(|m| m.0.consumes_recv_wqe()).count() as u32;
        for (i, &(verb, len)) in msgs.iter().enumerate() {
            lb.a_mut().post_send(WorkRequest::new(i as u64, verb, len)).unwrap();
        }
        // Receives may come late: the SENDs meet RNR NAKs until then.
        if recv_delay_us > 0 {
            lb.run_until(Ps::from_us(recv_delay_us), 1_000_000);
        }
        lb.b_mut().post_recv(recvs);
        prop_assert!(lb.run_until(Ps::from_ms(60_000), 5_000_000), "did not go quiet");

        prop_assert_eq!(lb.a().state(), QpState::Rts);
        let done: Vec<_> = std::iter::from_fn(|| lb.a_mut().poll_completion()).collect();
        prop_assert_eq!(done.len(), msgs.len());
        for (i, c) in done.iter().enumerate() {
            prop_assert_eq!(c.wr_id, i as u64);
            prop_assert_eq!(c.status, WcStatus::Success);
            prop_assert_eq!(c.bytes, msgs[i].1);
            prop_assert_eq!(c.verb, msgs[i].0);
        }
        prop_assert!(done.windows(2).all(|w| w[0].at <= w[1].at));
        let got: Vec<_> = std::iter::from_fn(|| lb.b_mut().poll_inbound()).collect();
        prop_assert_eq!(got.len(), msgs.len());
        let mut psn = Psn::new(a_psn);
        for (i, m) in got.iter().enumerate() {
            prop_assert_eq!((m.verb, m.len), msgs[i]);
            prop_assert_eq!(m.first_psn, psn);
            prop_assert_eq!(m.msn, i as u32 + 1);
            let imm = m.verb.has_immediate().then_some(i as u32);
            prop_assert_eq!(m.imm, imm);
            psn = psn.add(Psn::packets_for(m.len, pmtu));
        }
        prop_assert_eq!(lb.b().expected_psn(), psn);
        prop_assert_eq!(lb.a().oldest_unacked_psn(), psn);
        let (ka, kb) = (lb.a().counters(), lb.b().counters());
        prop_assert_eq!(ka.msgs_completed, msgs.len() as u64);
        prop_assert_eq!(ka.bytes_completed, msgs.iter().map(|m| m.1).sum::<u64>());
        prop_assert_eq!(kb.msgs_received, msgs.len() as u64);
        prop_assert_eq!(kb.recv_wqes_consumed, u64::from(recvs));
        // What one side sent, the other received or the channel dropped.
        let (sent_ab, lost_ab) = lb.sent(Dir::AtoB);
        prop_assert_eq!(ka.tx_packets, sent_ab);
        prop_assert_eq!(kb.rx_packets, sent_ab - lost_ab);
        let (sent_ba, lost_ba) = lb.sent(Dir::BtoA);
        prop_assert_eq!(kb.tx_packets, sent_ba);
        prop_assert_eq!(ka.rx_packets, sent_ba - lost_ba);
    }

    #[test]
    fn silence_fails_after_exactly_retry_cnt_retries(
        retry_cnt in 0u8..=7,
        sizes in prop::collection::vec(0u64..20_000, 1..10),
        read_at in prop::option::of(0usize..10),
        silent_from in 0u64..40,
        a_psn in 0u32..0x100_0000,
    ) {
        let mut lb = bench(1024, retry_cnt, a_psn, 7, 0);
        lb.record_trace();
        let silent = Rc::new(Cell::new(false));
        let s = silent.clone();
        lb.set_loss(Dir::AtoB, Loss::Custom(Box::new(move |n, _| {
            if n >= silent_from {
                s.set(true);
            }
            s.get()
        })));
        let s = silent.clone();
        lb.set_loss(Dir::BtoA, Loss::Custom(Box::new(move |_, _| s.get())));
        for (i, &len) in sizes.iter().enumerate() {
            let verb = if read_at == Some(i) { Verb::Read } else { Verb::Write };
            lb.a_mut().post_send(WorkRequest::new(i as u64, verb, len)).unwrap();
        }
        prop_assert!(lb.run_until(Ps::from_ms(60_000), 5_000_000));
        let done: Vec<_> = std::iter::from_fn(|| lb.a_mut().poll_completion()).collect();
        prop_assert_eq!(done.len(), sizes.len());
        prop_assert!(done.iter().enumerate().all(|(i, c)| c.wr_id == i as u64));
        if !silent.get() {
            // Everything fitted in the packets before the silence.
            prop_assert!(done.iter().all(|c| c.status == WcStatus::Success));
            return Ok(());
        }
        let fail = done.iter().position(|c| c.status != WcStatus::Success);
        let Some(fail) = fail else {
            // The silence only hit packets after the last one needed.
            return Ok(());
        };
        prop_assert_eq!(done[fail].status, WcStatus::RetryExcErr);
        prop_assert!(done[fail + 1..].iter().all(|c| c.status == WcStatus::WrFlushErr));
        prop_assert_eq!(lb.a().state(), QpState::Error(WcStatus::RetryExcErr));
        // The oldest unacknowledged PSN went out once plus once per retry.
        // For a READ whose first responses arrived, that PSN is a response
        // PSN: count the requests for the READ (the original from its first
        // PSN, the re-requests from the first missing response).
        let una = lb.a().oldest_unacked_psn();
        let first = sizes[..fail]
            .iter()
            .fold(Psn::new(a_psn), |p, &len| p.add(Psn::packets_for(len, 1024)));
        let is_read = read_at == Some(fail);
        let sends = lb
            .trace()
            .iter()
            .filter(|e| e.dir == Dir::AtoB)
            .filter(|e| {
                let psn = e.pkt.bth.psn;
                if is_read {
                    e.pkt.bth.opcode.0 == 0x0C
                        && psn.distance(first) >= 0
                        && psn.distance(una) <= 0
                } else {
                    psn == una
                }
            })
            .count();
        prop_assert_eq!(sends, usize::from(retry_cnt) + 1, "transmissions of PSN {}", una);
        let k = lb.a().counters();
        prop_assert_eq!(k.timeouts, u64::from(retry_cnt) + 1);
        prop_assert_eq!(k.rewinds.timeout, u64::from(retry_cnt));
        prop_assert_eq!(k.rewinds.total(), u64::from(retry_cnt));
    }

    #[test]
    fn arbitrary_loss_never_duplicates_or_reorders(
        pmtu in prop_oneof![Just(256u32), Just(1024), Just(4096)],
        msgs in prop::collection::vec(message(), 1..16),
        a_psn in 0u32..0x100_0000,
        density in 0.0f64..0.6,
        seed in any::<u64>(),
        retry_cnt in 0u8..=7,
    ) {
        let mut lb = bench(pmtu, retry_cnt, a_psn, 3, seed);
        let mut rng = seed;
        let mut pattern = |len| -> Vec<bool> {
            (0..len)
                .map(|_| {
                    // splitmix64: a pattern from the seed, reproducible.
                    rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
                    let mut z = rng;
                    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 > 1.0 - density
                })
                .collect()
        };
        lb.set_loss(Dir::AtoB, raw_loss(pattern(400)));
        lb.set_loss(Dir::BtoA, raw_loss(pattern(400)));
        lb.b_mut().set_record_inbound(true);
        let recvs = msgs.iter().filter(|m| m.0.consumes_recv_wqe()).count() as u32;
        lb.b_mut().post_recv(recvs);
        for (i, &(verb, len)) in msgs.iter().enumerate() {
            lb.a_mut().post_send(WorkRequest::new(i as u64, verb, len)).unwrap();
        }
        prop_assert!(lb.run_until(Ps::from_ms(60_000), 5_000_000), "did not go quiet");
        let done: Vec<_> = std::iter::from_fn(|| lb.a_mut().poll_completion()).collect();
        prop_assert_eq!(done.len(), msgs.len());
        prop_assert!(done.iter().enumerate().all(|(i, c)| c.wr_id == i as u64));
        let ok = done.iter().take_while(|c| c.status == WcStatus::Success).count();
        if ok < done.len() {
            prop_assert_eq!(done[ok].status, WcStatus::RetryExcErr);
            prop_assert!(done[ok + 1..].iter().all(|c| c.status == WcStatus::WrFlushErr));
        }
        let got: Vec<_> = std::iter::from_fn(|| lb.b_mut().poll_inbound()).collect();
        prop_assert!(got.len() >= ok && got.len() <= msgs.len());
        for (i, m) in got.iter().enumerate() {
            prop_assert_eq!((m.verb, m.len), msgs[i]);
            prop_assert_eq!(m.msn, i as u32 + 1);
        }
    }
}
