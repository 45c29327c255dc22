//! Where a reader's bytes are: a plain file is mapped in windows that
//! follow the reader; a gzip stream or a pipe is read into buffers that
//! come from a small pool and go back to it when their last batch is
//! dropped.
//!
//! ```text
//!  plain file:  |── 8 MiB window, from a 2 MiB boundary ──|  next window mapped when a record runs past the end;
//!               the old one is unmapped when its last batch is dropped
//!  stream:      [ buffer A (held by batches) ]  unread tail ──copied──▶ [ buffer B from the pool ] ◀── read()
//! ```

use std::fs::File;
use std::io::{self, Read};
use std::sync::{Arc, Mutex, Weak};

use super::{CaptureError, CaptureReader};

/// Bytes read from a stream at a time (and the smallest stream buffer).
pub(super) const CHUNK: usize = 1 << 20;
/// Spare buffers a reader keeps for reuse; more in flight are allocated.
const POOL_KEEP: usize = 16;

/// Buffers that batches hand back when they are dropped, so that a reader
/// streaming through a large file reuses a handful of them.
#[derive(Default)]
pub(super) struct Pool {
    free: Mutex<Vec<Vec<u8>>>,
}

impl Pool {
    pub(super) fn take(&self, len: usize) -> Vec<u8> {
        let spare = self.free.lock().ok().and_then(|mut f| f.pop());
        let mut v = spare.unwrap_or_default();
        if v.len() < len {
            v.resize(len, 0);
        }
        v
    }
}

/// A read buffer, returned to its pool when the last holder drops it.
pub(super) struct Buffer {
    pub(super) bytes: Vec<u8>,
    pub(super) pool: Weak<Pool>,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // Buffers grown for an outsized record are not worth keeping.
        if self.bytes.len() > 4 * CHUNK {
            return;
        }
        if let Some(pool) = self.pool.upgrade() {
            if let Ok(mut free) = pool.free.lock() {
                if free.len() < POOL_KEEP {
                    free.push(std::mem::take(&mut self.bytes));
                }
            }
        }
    }
}

/// Where a reader's bytes come from.
pub(super) enum Source {
    Stream(Box<dyn Read + Send>),
    Mapped { file: File, len: u64 },
}

/// The bytes a reader walks and its batches point into.
#[derive(Clone)]
pub(super) enum Bytes {
    Empty,
    Read(Arc<Buffer>),
    Mapped(Arc<memmap2::Mmap>),
}

impl Bytes {
    pub(super) fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Empty => &[],
            Bytes::Read(b) => &b.bytes,
            Bytes::Mapped(m) => m,
        }
    }
}

/// A mapped window's size, and the alignment of its start in the file:
/// page-cache pages of a file read from disk are often 2 MiB folios, which
/// map in one go when the window starts on one. Mapped pages count in the
/// resident set until their window is unmapped (when its last batch is
/// dropped), so the window bounds the memory a reader shows: ~25 MB peak
/// RSS for `analyze` of a 2 GB capture, against ~37 MB with 16 MiB windows.
const WINDOW: usize = 8 << 20;
const WINDOW_ALIGN: u64 = 2 << 20;

impl CaptureReader {
    /// Makes at least `want` bytes available from `start`, unless the file
    /// ends first. A stream reads as much as its buffer holds in each call
    /// but stops as soon as `want` bytes are there, without waiting for
    /// more input.
    pub(super) fn fill(&mut self, want: usize) -> Result<(), CaptureError> {
        if self.end - self.start >= want || self.eof {
            return Ok(());
        }
        if let Source::Mapped { file, len } = &self.src {
            // Map a new window from the 2 MiB boundary at or before `pos`.
            let base = self.pos - self.pos % WINDOW_ALIGN;
            let skip = (self.pos - base) as usize;
            let left = len - base;
            let size = (skip + want).max(WINDOW) as u64;
            let size = size.min(left) as usize;
            let map = unsafe {
                // SAFETY: the mapping is read-only and nothing in this
                // process writes the file. Another process truncating it
                // meanwhile ends this one with SIGBUS (documented on `open`).
                memmap2::MmapOptions::new().offset(base).len(size).map(file)
            }
            .map_err(|source| CaptureError::Io {
                path: self.path.clone(),
                offset: self.pos,
                source,
            })?;
            // No MADV_SEQUENTIAL: it marks the pages as used once, so the
            // host's reclaim splits and drops them sooner, and it made a
            // cold read of a 1.18 GB capture take 2.0 s instead of 0.4 s.
            self.buf = Bytes::Mapped(Arc::new(map));
            self.start = skip;
            self.end = size;
            self.eof = base + size as u64 == *len;
            return Ok(());
        }
        let Source::Stream(src) = &mut self.src else {
            unreachable!("mapped sources return above");
        };
        let have = self.end - self.start;
        let Bytes::Read(cur) = &mut self.buf else {
            unreachable!("a stream reads into buffers");
        };
        let buf = match Arc::get_mut(cur) {
            Some(b) => {
                if self.start > 0 {
                    b.bytes.copy_within(self.start..self.end, 0);
                }
                &mut b.bytes
            }
            None => {
                // Batches still read the current buffer: carry the unread
                // tail over into another one.
                let mut bytes = self.pool.take(CHUNK.max(want));
                bytes[..have].copy_from_slice(&cur.bytes[self.start..self.end]);
                *cur = Arc::new(Buffer {
                    bytes,
                    pool: Arc::downgrade(&self.pool),
                });
                &mut Arc::get_mut(cur).expect("just made").bytes
            }
        };
        self.end = have;
        self.start = 0;
        if buf.len() < want {
            buf.resize(want.next_power_of_two(), 0);
        }
        while self.end < want {
            if self.end == buf.len() {
                let n = buf.len();
                buf.resize(n * 2, 0);
            }
            match src.read(&mut buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // flate2 reports a deflate stream that stops before its
                // end this way: what was decompressed before is good, so
                // it is a cut file like any other.
                Err(e) if self.gzip && e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.eof = true;
                    self.gzip_truncated = true;
                    break;
                }
                Err(source) => {
                    return Err(CaptureError::Io {
                        path: self.path.clone(),
                        offset: self.pos + (self.end - self.start) as u64,
                        source,
                    });
                }
            }
        }
        Ok(())
    }
}
