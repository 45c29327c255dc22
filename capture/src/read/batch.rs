//! [`FrameBatch`]: a run of records handed to another thread together
//! with a shared handle on the bytes they sit in (a mapped window or a
//! pooled buffer), so that it can be decoded while the reader goes on.

use super::window::Bytes;
use super::{LinkType, RawFrame};

/// Most frames and bytes in one batch: small enough that two decoders
/// share a file evenly, large enough that handing a batch over (a wake-up
/// and a context switch, several microseconds on a VM) is rare. A batch
/// never spans two buffers, so the stream path's are 1 MiB at most.
pub(super) const BATCH_FRAMES: usize = 8192;
pub(super) const BATCH_BYTES: u64 = 4 << 20;

/// Where one frame sits in a reader's buffer (or a batch's).
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) ts_ns: u64,
    pub(super) offset: u64,
    pub(super) wire_len: usize,
    pub(super) data_at: usize,
    pub(super) data_len: usize,
    pub(super) link: LinkType,
}

impl Slot {
    /// The frame, in the bytes the slot points into.
    #[inline]
    pub(super) fn frame<'a>(&self, buf: &'a [u8]) -> RawFrame<'a> {
        RawFrame {
            ts_ns: self.ts_ns,
            wire_len: self.wire_len,
            data: &buf[self.data_at..self.data_at + self.data_len],
            link: self.link,
            offset: self.offset,
        }
    }
}

/// Consecutive frames of one capture with the buffer (or mapped window)
/// they are in: owned and `Send`, so a batch can be decoded on another
/// thread while the reader goes on.
pub struct FrameBatch {
    pub(super) buf: Bytes,
    pub(super) slots: Vec<Slot>,
    pub(super) first_number: u64,
    pub(super) capture_first_ts: u64,
    pub(super) end_offset: u64,
}

impl FrameBatch {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The 1-based number of the batch's first frame in its capture (as
    /// tshark numbers frames).
    pub fn first_number(&self) -> u64 {
        self.first_number
    }

    /// Timestamp of the first frame of the whole capture (not just of this
    /// batch), which relative times are counted from.
    pub fn capture_first_ts(&self) -> u64 {
        self.capture_first_ts
    }

    /// Byte offset just past the batch's last record in the (decompressed) file.
    pub fn end_offset(&self) -> u64 {
        self.end_offset
    }

    /// The `i`-th frame of the batch.
    pub fn get(&self, i: usize) -> RawFrame<'_> {
        self.slots[i].frame(self.buf.as_slice())
    }

    /// The frames in capture order. Handing out a frame asks the CPU to
    /// fetch the next one's bytes: a decoder reading mapped frames (the
    /// ICRC covers every byte) otherwise waits on memory at every page
    /// boundary, where the hardware prefetchers stop (a third of the ICRC
    /// time on 4 KiB frames).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RawFrame<'_>> + '_ {
        (0..self.slots.len()).map(|i| {
            if let Some(next) = self.slots.get(i + 1) {
                let len = next.data_len.min(PREFETCH_MAX);
                prefetch(&self.buf.as_slice()[next.data_at..next.data_at + len]);
            }
            self.get(i)
        })
    }
}

/// Most bytes of a frame fetched ahead (a jumbo frame's first 9 KiB).
const PREFETCH_MAX: usize = 9216;

/// Hints the CPU to bring `bytes` into its caches; no effect on results.
#[inline]
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        for line in bytes.chunks(64) {
            // SAFETY: a prefetch reads nothing and cannot fault; the
            // pointer is inside `bytes`. (Newer compilers deem the call
            // safe, older ones do not.)
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast());
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}
