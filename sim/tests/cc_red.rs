//! RED/ECN marking: exact probabilities, which draws it consumes, a
//! statistical check over many draws, and the HPCC reference's marking from
//! its KMIN_MAP/KMAX_MAP/PMAX_MAP, including the anchors' own files.

use rocesim::cc::red::{CE, NOT_ECT};
use rocesim::cc::{MarkPoint, ParamError, RedParams};
use rocesim::hpcc::config;
use rocesim::rng::{component_rng, unit_f64};
use rocesim::time::Rate;

const ECT0: u8 = 0b10;
const ECT1: u8 = 0b01;

/// The reference's 100G row: Kmin 400 KB, Kmax 1600 KB, Pmax 0.2.
fn red100() -> RedParams {
    RedParams {
        kmin_bytes: 400_000,
        kmax_bytes: 1_600_000,
        pmax: 0.2,
        mark_point: MarkPoint::Dequeue,
        mark_non_ect: true,
    }
}

#[test]
fn probability_by_region() {
    let r = red100();
    // Up to and at Kmin: never. At Kmax: Pmax. Above Kmax: always.
    assert_eq!(r.mark_probability(0), 0.0);
    assert_eq!(r.mark_probability(400_000), 0.0);
    assert_eq!(r.mark_probability(1_600_000), 0.2);
    assert_eq!(r.mark_probability(1_600_001), 1.0);
    // Halfway, q = 1,000,000: 0.2 × 600,000 / 1,200,000 = 0.1.
    assert!((r.mark_probability(1_000_000) - 0.1).abs() < 1e-16);
    // One byte over Kmin: 0.2 / 1,200,000.
    assert!((r.mark_probability(400_001) - 0.2 / 1.2e6).abs() < 1e-20);
    // Kmin = Kmax is a step (DCTCP-style K): no division by zero.
    let step = RedParams {
        kmin_bytes: 100_000,
        kmax_bytes: 100_000,
        ..r
    };
    assert_eq!(step.mark_probability(100_000), 0.0);
    assert_eq!(step.mark_probability(100_001), 1.0);
}

#[test]
fn draws_only_between_the_thresholds() {
    let r = red100();
    let fresh = || component_rng(7, "switch0.port3.prio3");
    // Certain outcomes leave the stream untouched.
    for (q, ecn, want) in [
        (100, ECT0, false),
        (2_000_000, ECT0, true),
        (1_000_000, CE, true),
        (2_000_000, ECT1, true),
    ] {
        let mut rng = fresh();
        assert_eq!(r.should_mark(q, ecn, &mut rng), want, "q {q} ecn {ecn}");
        assert!(rng == fresh(), "q {q}: drew a number it did not need");
    }
    let no_non_ect = RedParams {
        mark_non_ect: false,
        ..r
    };
    let mut rng = fresh();
    assert!(!no_non_ect.should_mark(2_000_000, NOT_ECT, &mut rng));
    assert!(rng == fresh());
    assert!(
        r.should_mark(2_000_000, NOT_ECT, &mut fresh()),
        "the reference marks Not-ECT"
    );
    // Between: exactly one uniform draw, compared with p. Replaying the
    // stream gives the same decisions.
    let mut rng = fresh();
    let mut replay = fresh();
    for i in 0..1000u64 {
        let q = 400_001 + i * 1_199;
        let got = r.should_mark(q, ECT0, &mut rng);
        assert_eq!(
            got,
            unit_f64(&mut replay) < r.mark_probability(q),
            "draw {i}"
        );
    }
    assert!(rng == replay);
}

#[test]
fn marks_at_the_rate_it_says() {
    // p = 0.1 at q = 1 MB. Over n = 200,000 draws the count is binomial:
    // mean 20,000, sd = sqrt(n p (1 − p)) ≈ 134; allow 5 sd.
    let r = red100();
    let mut rng = component_rng(42, "red.stat");
    let n = 200_000;
    let marked = (0..n)
        .filter(|_| r.should_mark(1_000_000, ECT0, &mut rng))
        .count() as f64;
    assert!((marked - 20_000.0).abs() < 5.0 * 134.2, "{marked}");
    // Near Kmin the rate is near zero, near Kmax near Pmax.
    let marked = (0..n)
        .filter(|_| r.should_mark(1_540_000, ECT0, &mut rng))
        .count() as f64;
    // p = 0.2 × 1,140,000 / 1,200,000 = 0.19: mean 38,000, sd ≈ 175.
    assert!((marked - 38_000.0).abs() < 5.0 * 175.4, "{marked}");
}

#[test]
fn validation_names_the_key() {
    let buf = 32 * 1024 * 1024;
    red100().validate(buf).unwrap();
    let kmin = RedParams {
        kmin_bytes: 2_000_000,
        ..red100()
    };
    says(
        &kmin.validate(buf).unwrap_err(),
        "kmin_bytes",
        "2000000 is above kmax_bytes (1600000)",
    );
    for bad in [1.5, -0.1, f64::NAN] {
        let e = RedParams {
            pmax: bad,
            ..red100()
        }
        .validate(buf)
        .unwrap_err();
        says(&e, "pmax", "is outside [0, 1]");
    }
    let e = red100().validate(1_000_000).unwrap_err();
    says(&e, "kmax_bytes", "above the switch buffer (1000000 bytes)");
    assert!(e.hint.unwrap().contains("1000 bytes"));
}

#[test]
fn reference_preset_from_its_maps() {
    let text = "KMAX_MAP 2 100000000000 1600 400000000000 6400\n\
                KMIN_MAP 2 100000000000 400 400000000000 1600\n\
                PMAX_MAP 2 100000000000 0.20 400000000000 0.20\n";
    let cfg = config::parse(text, "c.txt").unwrap();
    let (p400, missing) = config::HpccConfig::red(&cfg, Rate::gbps(400));
    assert!(missing.is_empty());
    assert_eq!(
        (p400.kmin_bytes, p400.kmax_bytes, p400.pmax),
        (1_600_000, 6_400_000, 0.2)
    );
    assert_eq!(p400.mark_point, MarkPoint::Dequeue);
    assert!(p400.mark_non_ect);
    // A speed the maps leave out: the reference's optimized build reads 0
    // from all three (its NS_ASSERT_MSG is compiled out), and Kmax 0 marks
    // every packet that leaves a byte behind it.
    let (p25, missing) = config::HpccConfig::red(&cfg, Rate::gbps(25));
    assert_eq!(missing, ["KMIN_MAP", "KMAX_MAP", "PMAX_MAP"]);
    assert_eq!((p25.kmin_bytes, p25.kmax_bytes, p25.pmax), (0, 0, 0.0));
    let mut rng = component_rng(1, "red.unmapped");
    assert!(p25.should_mark(1, 0b10, &mut rng));
    assert!(!p25.should_mark(0, 0b10, &mut rng));
    // Kmin without Kmax: Kmax (0) is looked at first, so Kmin is moot.
    let only_kmin = config::parse("KMIN_MAP 1 25000000000 100\n", "c.txt").unwrap();
    let (p, missing) = config::HpccConfig::red(&only_kmin, Rate::gbps(25));
    assert_eq!(missing, ["KMAX_MAP", "PMAX_MAP"]);
    assert_eq!((p.kmin_bytes, p.kmax_bytes), (0, 0));
    p.validate(1 << 20).unwrap();
    // Pmax alone missing: no ramp, marks above Kmax only.
    let no_pmax = config::parse(
        "KMAX_MAP 1 25000000000 400\nKMIN_MAP 1 25000000000 100\n",
        "c.txt",
    )
    .unwrap();
    let (p, missing) = config::HpccConfig::red(&no_pmax, Rate::gbps(25));
    assert_eq!(missing, ["PMAX_MAP"]);
    assert_eq!(p.mark_probability(300_000), 0.0);
    assert_eq!(p.mark_probability(400_001), 1.0);
}

/// The error names `key` and its problem says `text`.
fn says(e: &ParamError, key: &str, text: &str) {
    assert_eq!(e.key, key, "{}", e.problem);
    assert!(e.problem.contains(text), "{}: {}", e.key, e.problem);
}

/// The anchors' configuration files, read as the reference reads them.
#[test]
fn anchor_configs() {
    let Some(dir) = roce_testkit::ci::shared("anchors/hpcc-ns3") else {
        return;
    };
    for (file, rates) in [
        ("e3_dcqcn_2to1_notrace.cfg", vec![25, 50, 100]),
        ("config_fat_ws30_10ms_dcqcn.txt", vec![100, 400]),
    ] {
        let cfg = config::read(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
        for g in rates {
            let (p, missing) = config::HpccConfig::red(&cfg, Rate::gbps(g));
            assert!(missing.is_empty(), "{file} {g}G: {missing:?}");
            p.validate(cfg.buffer_bytes())
                .unwrap_or_else(|e| panic!("{file} {g}G: {e}"));
        }
        // README: 100G is Kmin 400 KB, Kmax 1600 KB, Pmax 0.2 in both.
        let (p, _) = config::HpccConfig::red(&cfg, Rate::gbps(100));
        assert_eq!(
            (p.kmin_bytes, p.kmax_bytes, p.pmax),
            (400_000, 1_600_000, 0.2),
            "{file}"
        );
    }
}
