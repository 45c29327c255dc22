//! Capture taps: a port's frames, both directions, as tcpdump on that
//! interface would record them (tx when the frame starts on the wire, rx
//! when its last bit arrived). Bytes are made here and only here, by the
//! codec's `FrameRepr::emit`, with valid lengths, checksums and ICRCs.

use roce_capture::write::CaptureWriter;

use crate::packet::Packet;
use crate::time::Ps;
use roce_codec::IntRepr;

/// All-zero payload bytes: the simulator does not model data contents.
static ZEROS: [u8; 4096] = [0; 4096];

pub struct Tap {
    pub port: u32,
    pub file_name: String,
    writer: Option<CaptureWriter>,
    buf: Vec<u8>,
    /// An ICMP error's quote is emitted here first.
    quote: Vec<u8>,
    pub frames: u64,
    error: Option<String>,
}

impl Tap {
    /// A tap recording `port` into `writer`, a capture the caller created
    /// (the model opens no files), named `file_name` in the outputs.
    pub fn new(port: u32, writer: CaptureWriter, file_name: String) -> Tap {
        Tap {
            port,
            file_name,
            writer: Some(writer),
            buf: vec![0; 16384],
            quote: vec![0; 16384],
            frames: 0,
            error: None,
        }
    }

    /// A tap without a file, holding the place of one that another part
    /// of a partitioned run records (`world::part`).
    pub fn elsewhere(port: u32, file_name: String) -> Tap {
        Tap {
            port,
            file_name,
            writer: None,
            buf: Vec::new(),
            quote: Vec::new(),
            frames: 0,
            error: None,
        }
    }

    /// `data`: the opaque body of a TCP segment (a key message).
    pub fn record(&mut self, at: Ps, pkt: &Packet, int: Option<&IntRepr>, data: Option<&[u8]>) {
        if self.error.is_some() {
            return;
        }
        let repr = match int {
            Some(i) => pkt.frame_repr().with_int(*i),
            None => pkt.frame_repr(),
        };
        let body = pkt.l2_body();
        let quote = pkt.icmp_data(&mut self.quote, &ZEROS);
        let payload = match (&body, quote, data) {
            (Some(body), _, _) => &body[..],
            (None, Some(q), _) => q,
            (None, None, Some(d)) => d,
            (None, None, None) if matches!(pkt.l3, crate::packet::L3::Tcp { .. }) => &[],
            (None, None, None) => &ZEROS[..pkt.ib.payload_len as usize],
        };
        let n = repr.emit(&mut self.buf, payload);
        debug_assert_eq!(n, usize::from(pkt.frame_len));
        if let Some(w) = &mut self.writer {
            if let Err(e) = w.write(at.as_ns(), &self.buf[..n]) {
                self.error = Some(e.to_string());
            }
        }
        self.frames += 1;
    }

    /// Flushes the file; reports the first write error.
    pub fn finish(&mut self) -> Result<(), String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.writer.take() {
            Some(w) => w.finish().map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }
}
