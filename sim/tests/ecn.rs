//! ECN marking at switch egress (`[switch.ecn]`): what the switch counts
//! as marked is what the receiving NIC counts as CE and what tshark reads
//! in a capture of the receiver's link.

mod common;

use common::*;
use roce_testkit::tshark::{fields, tshark};

/// a and b write 1 MiB messages into c at once through sw1 (100G, 1 us
/// links): a 2:1 incast whose queue at sw1.pc builds to a few hundred
/// kilobytes. Traffic class `tc` (106: DSCP 26 = priority 3, ECT(0)).
fn incast(tc: u8, ecn: &str) -> String {
    let mut t = host("a", "profile = \"rxe\"\n", &[("eth0", "10.0.0.1/24")], 4200)
        + &host("b", "profile = \"rxe\"\n", &[("eth0", "10.0.0.2/24")], 4200)
        + &host("c", "profile = \"rxe\"\n", &[("eth0", "10.0.0.3/24")], 4200)
        + &switch("sw1", "", &[])
        + ecn;
    for (h, p) in [("a", "pa"), ("b", "pb"), ("c", "pc")] {
        t += &link(&format!("{h}.eth0"), &format!("sw1.{p}"), "100G");
    }
    for c in ["a", "b"] {
        t += &write_bw(c, "c", &format!("size = \"1MiB\"\niters = 4\ntc = {tc}\n"));
    }
    t + "[[tap]]\nat = \"c.eth0\"\nsnaplen = 64\n"
}

const RED: &str =
    "  [switch.ecn]\n  priorities = [3]\n  kmin = \"20KB\"\n  kmax = \"200KB\"\n  pmax = 0.5\n";

/// The frames of a capture tshark sees with CE (ECN 3).
fn ce_in_capture(file: &std::path::Path) -> usize {
    fields(file, &["-Y", "ip.dsfield.ecn == 3"], &["frame.number"]).len()
}

#[test]
fn marks_made_at_the_switch_are_the_ce_packets_the_receiver_sees() {
    for (tag, mark) in [("enq", "enqueue"), ("deq", "dequeue")] {
        let red = format!("{RED}  mark = \"{mark}\"\n");
        let (dir, s) = run_text(&format!("ecn_{tag}"), &incast(106, &red), &[]);
        let marked = counter(&s, "sw1.pc", "tx_prio3_ecn_marked");
        assert!(marked > 100, "{mark}: only {marked} marks");
        assert_eq!(
            counter(&s, "c.eth0", "np_ecn_marked_roce_packets"),
            marked,
            "{mark}: every mark reaches the receiver's notification point"
        );
        // The ACKs towards a and b queue nowhere: no marks there.
        for p in ["sw1.pa", "sw1.pb"] {
            assert_eq!(counter(&s, p, "tx_prio3_ecn_marked"), 0, "{p}");
        }
        assert!(
            s["counters"]["sw1.pc"].get("tx_prio4_ecn_marked").is_none(),
            "priority 4 does not mark, so has no counter"
        );
        if tshark().is_some() {
            let ce = ce_in_capture(&dir.join("run/c.eth0.pcap"));
            assert_eq!(ce as u64, marked, "{mark}: CE frames in the capture");
        }
    }
}

/// Without a `mark` key a switch marks at dequeue, as SONiC's ECN test
/// plan expects of Spectrum and Trident/Tomahawk switches: as many marks
/// as with `mark = "dequeue"` (the same run), not as many as at enqueue.
#[test]
fn the_default_marking_point_is_dequeue() {
    let marks = |tag: &str, red: &str| {
        let (_, s) = run_text(&format!("ecn_default_{tag}"), &incast(106, red), &[]);
        counter(&s, "sw1.pc", "tx_prio3_ecn_marked")
    };
    let default = marks("none", RED);
    assert_eq!(
        default,
        marks("deq", &format!("{RED}  mark = \"dequeue\"\n"))
    );
    assert_ne!(
        default,
        marks("enq", &format!("{RED}  mark = \"enqueue\"\n"))
    );
}

#[test]
fn not_ect_packets_are_marked_only_when_the_switch_marks_all() {
    // tc 104: DSCP 26, Not-ECT.
    let (_, s) = run_text("ecn_not_ect", &incast(104, RED), &[]);
    assert_eq!(counter(&s, "sw1.pc", "tx_prio3_ecn_marked"), 0);
    assert_eq!(counter(&s, "c.eth0", "np_ecn_marked_roce_packets"), 0);
    let (_, s) = run_text(
        "ecn_all",
        &incast(104, RED),
        &["switch.sw1.ecn.ect_only=false"],
    );
    let marked = counter(&s, "sw1.pc", "tx_prio3_ecn_marked");
    assert!(marked > 100, "{marked}");
    assert_eq!(counter(&s, "c.eth0", "np_ecn_marked_roce_packets"), marked);
}

/// Kmin = Kmax = 0 at enqueue marks exactly the packets that found any
/// byte queued ahead of them; with a threshold per speed that names the
/// port's speed the result is the same.
#[test]
fn thresholds_per_speed_pick_the_ports_speed() {
    let step = "  [switch.ecn]\n  priorities = [3]\n  kmin = 0\n  kmax = 0\n  pmax = 1\n";
    let (_, a) = run_text("ecn_step", &incast(106, step), &[]);
    let per_speed = "  [switch.ecn]\n  priorities = [3]\n  pmax = 1\n  \
                     kmin = { \"25Gbps\" = \"1MB\", \"100Gbps\" = 0 }\n  \
                     kmax = { \"100Gbps\" = 0, \"400Gbps\" = \"1MB\" }\n";
    let (_, b) = run_text("ecn_per_speed", &incast(106, per_speed), &[]);
    let marked = counter(&a, "sw1.pc", "tx_prio3_ecn_marked");
    assert!(marked > 100, "{marked}");
    assert_eq!(counter(&b, "sw1.pc", "tx_prio3_ecn_marked"), marked);
    assert_eq!(a["counters"], b["counters"], "same run, same counters");
}

/// A run without `[switch.ecn]` marks nothing and shows no marking
/// counters (today's behaviour).
#[test]
fn no_ecn_table_no_marks() {
    let (_, s) = run_text("ecn_none", &incast(106, ""), &[]);
    assert_eq!(counter(&s, "c.eth0", "np_ecn_marked_roce_packets"), 0);
    let sw = s["counters"]["sw1.pc"].as_object().unwrap();
    assert!(!sw.keys().any(|k| k.contains("ecn")), "{sw:?}");
}
