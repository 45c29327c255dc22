//! The report's request flows in the vocabulary both tools share,
//! [`QpFigures`] (`roce_capture::figures`), so that a capture can be put
//! beside a simulation of it. The crate docs say what each figure is here.

use roce_capture::figures::{Percentiles, QpFigures, QpKey};

use super::model::{QpReport, Report};

impl Report {
    /// One [`QpFigures`] per request flow, in the order of `qps`.
    pub fn qp_figures(&self) -> Vec<QpFigures> {
        let origin = self.capture.first_ts_ns.unwrap_or(0);
        self.qps
            .iter()
            .map(|q| self.figures_of(q, origin))
            .collect()
    }

    fn figures_of(&self, q: &QpReport, origin: u64) -> QpFigures {
        QpFigures {
            key: QpKey {
                src: q.src.clone(),
                dst: q.dst.clone(),
                responder_qpn: q.dqpn,
            },
            requester_qpn: q.requester_qpn,
            udp_sport: q.sport,
            first_ns: Some(q.first_ts_ns.saturating_sub(origin)),
            last_ns: Some(q.last_ts_ns.saturating_sub(origin)),
            payload_bytes: q.payload_bytes,
            packets: q.packets,
            wire_bytes: q.bytes,
            goodput_gbps: q.goodput_gbps,
            messages: q.messages,
            // The request direction less the CNPs the requester sent.
            request_packets: q.request_packets - (q.cnps - q.cnps_to_requester),
            retransmitted_packets: q.retransmitted_packets,
            go_back_n: q.go_back_n.episodes,
            timeouts: q.go_back_n.by_cause.get("timeout").copied().unwrap_or(0),
            naks: q.naks.values().sum(),
            cnps: q.cnps_to_requester,
            ecn_ce_packets: q.ecn_ce_requests,
            message_latency_ns: Percentiles {
                p50: q.message_latency_ns.p50,
                p99: q.message_latency_ns.p99,
                max: q.message_latency_ns.max,
            },
            port: self
                .lag
                .qp_map
                .iter()
                .find(|m| m.qp == q.id)
                .and_then(|m| m.request_file.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::path::PathBuf;

    use roce_capture::write::{CaptureFormat, CaptureWriter};
    use roce_codec::wire::aeth::Syndrome;
    use roce_codec::{FrameRepr, IbRepr, IpRepr, Ipv4Repr, Opcode, Psn, RethRepr};

    use roce_capture::figures::Percentiles;

    use crate::analyze::{AnalyzeOptions, analyze_files};

    const T0: u64 = 1_000_000_000_000;
    const REQUESTER: ([u8; 6], [u8; 4], u32) = ([2, 0, 0, 0, 0, 1], [10, 0, 0, 1], 0x11);
    const RESPONDER: ([u8; 6], [u8; 4], u32) = ([2, 0, 0, 0, 0, 2], [10, 0, 0, 2], 0x22);
    const SPORT: u16 = 50_000;

    /// A frame from `from` to `to` (which names the destination QP).
    fn frame(
        from: ([u8; 6], [u8; 4], u32),
        to: ([u8; 6], [u8; 4], u32),
        ib: IbRepr,
        ce: bool,
    ) -> Vec<u8> {
        let ip = Ipv4Repr::udp(
            Ipv4Addr::from(from.1),
            Ipv4Addr::from(to.1),
            26,
            if ce { 3 } else { 2 },
        );
        let payload = vec![0x5a; ib.payload_len as usize];
        FrameRepr::rocev2(to.0, from.0, IpRepr::V4(ip), SPORT, ib).to_vec(&payload)
    }

    fn request(op: u8, psn: u32, len: u32, ce: bool) -> Vec<u8> {
        let mut ib = IbRepr::new(Opcode(op), RESPONDER.2, Psn::new(psn), len)
            .with_ack_req(matches!(op, 0x04 | 0x08));
        if op == 0x06 {
            ib = ib.with_reth(RethRepr {
                va: 0x1000,
                rkey: 7,
                dma_len: 3 * 1024,
            });
        }
        frame(REQUESTER, RESPONDER, ib, ce)
    }

    fn ack(psn: u32, syndrome: Syndrome, msn: u32, ce: bool) -> Vec<u8> {
        let ib = IbRepr::ack(REQUESTER.2, Psn::new(psn), syndrome, msn);
        frame(RESPONDER, REQUESTER, ib, ce)
    }

    /// One RDMA WRITE of 3 KiB (its FIRST packet CE-marked), four SENDs,
    /// a PSN sequence error NAK answered by a go-back-N of two packets, a
    /// resend after a timeout (47 µs of silence: not a mirror copy, which
    /// would come within 10 µs); a CE-marked ACK, a CNP each way. Requests
    /// are in `slave1`, responses in `slave0`, which starts 1 µs earlier
    /// with a PFC frame: the origin of the figures' times.
    fn capture(dir: &std::path::Path) -> [PathBuf; 2] {
        let paths = [dir.join("slave0.pcap"), dir.join("slave1.pcap")];
        let mut w: Vec<CaptureWriter> = paths
            .iter()
            .map(|p| CaptureWriter::create(p, CaptureFormat::Pcap, 0, "bond0").unwrap())
            .collect();
        let ok = Syndrome::ACK_NO_CREDITS;
        let nak = Syndrome::NAK_PSN_SEQUENCE_ERROR;
        let cnp_to_requester = frame(RESPONDER, REQUESTER, IbRepr::cnp(REQUESTER.2), false);
        let cnp_to_responder = frame(REQUESTER, RESPONDER, IbRepr::cnp(RESPONDER.2), false);
        let frames: Vec<(usize, u64, Vec<u8>)> = vec![
            (
                0,
                0,
                FrameRepr::pfc(RESPONDER.0, 0x08, [0, 0, 0, 10, 0, 0, 0, 0]).to_vec(&[]),
            ),
            (1, 1_000, request(0x06, 100, 1024, true)),
            (1, 2_000, request(0x07, 101, 1024, false)),
            (1, 3_000, request(0x08, 102, 1024, false)),
            (0, 5_000, ack(102, ok, 1, true)),
            (0, 5_500, cnp_to_requester),
            (1, 5_600, cnp_to_responder),
            (1, 6_000, request(0x04, 103, 512, false)),
            (0, 6_500, ack(103, ok, 2, false)),
            (1, 7_000, request(0x04, 104, 256, false)),
            (1, 8_000, request(0x04, 105, 256, false)),
            (0, 9_000, ack(104, nak, 2, false)),
            (1, 10_000, request(0x04, 104, 256, false)),
            (1, 11_000, request(0x04, 105, 256, false)),
            (0, 12_000, ack(105, ok, 4, false)),
            (1, 13_000, request(0x04, 106, 128, false)),
            (1, 60_000, request(0x04, 106, 128, false)),
            (0, 61_000, ack(106, ok, 5, false)),
        ];
        for (file, t, bytes) in frames {
            w[file].write(T0 + t, &bytes).unwrap();
        }
        for w in w {
            w.finish().unwrap();
        }
        paths
    }

    #[test]
    fn each_figure_is_the_requester_side_of_the_flow() {
        let dir = std::env::temp_dir().join(format!("roce-pcap-figures-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let paths = capture(&dir);
        let report = analyze_files(&paths, &AnalyzeOptions::default())
            .unwrap()
            .report;
        let figures = report.qp_figures();
        assert_eq!(figures.len(), 1);
        let f = &figures[0];
        assert_eq!(
            (f.key.src.as_str(), f.key.dst.as_str(), f.key.responder_qpn),
            ("10.0.0.1", "10.0.0.2", 0x22)
        );
        assert_eq!(f.requester_qpn, Some(0x11));
        assert_eq!(f.udp_sport, SPORT);
        // The PFC frame at T0 starts the captures; the flow runs from the
        // WRITE FIRST at +1 µs to the last ACK at +61 µs.
        assert_eq!((f.first_ns, f.last_ns), (Some(1_000), Some(61_000)));
        // Requests, resends included: 3 x 1024 + 512 + 4 x 256 + 2 x 128.
        assert_eq!(f.payload_bytes, 4_864);
        // 10 requests, 5 ACKs/NAKs, 2 CNPs. Frame sizes: Ethernet 14 + IPv4
        // 20 + UDP 8 + BTH 12 + ICRC 4 = 58 bytes around the payload, plus
        // RETH 16 (WRITE FIRST), AETH 4 (ACK, NAK), 16 reserved bytes (CNP):
        // 1098 + 2 x 1082 + 570 + 4 x 314 + 2 x 186 + 5 x 62 + 2 x 74.
        assert_eq!(f.packets, 17);
        assert_eq!(f.wire_bytes, 5_918);
        // First transmissions, 3072 + 512 + 256 + 256 + 128 = 4224 bytes,
        // over the 60 µs from the first frame to the last.
        assert_eq!(f.goodput_gbps, 4_224.0 * 8.0 / 60_000.0);
        // The WRITE and the SENDs of PSN 103 to 106.
        assert_eq!(f.messages, 5);
        // First packet to the ACK covering the last: the WRITE 4 µs, the
        // SENDs 0.5, 5 (NAK, resend), 4 and 48 µs (timeout).
        assert_eq!(
            f.message_latency_ns,
            Percentiles {
                p50: Some(4_000),
                p99: Some(48_000),
                max: Some(48_000)
            }
        );
        // PSNs 104 and 105 after the NAK, 106 after the timeout.
        assert_eq!(f.retransmitted_packets, 3);
        // 10 requests, resends included (not the requester's CNP); the
        // go-back-N after the NAK and the one after the timeout.
        assert_eq!(f.request_packets, 10);
        assert_eq!(f.go_back_n, 2);
        assert_eq!(f.timeouts, 1);
        assert_eq!(f.naks, 1);
        // One CNP each way, one CE mark each way: the figures count the
        // requester's side, the report both.
        assert_eq!((f.cnps, f.ecn_ce_packets), (1, 1));
        assert_eq!((report.qps[0].cnps, report.qps[0].ecn_ce_packets), (2, 2));
        assert_eq!(f.port.as_deref(), Some(paths[1].to_str().unwrap()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
