//! The proxies of the network connections: what each QP event brings (a
//! send completed, a CTS or data arrived) and what it lets them post (the
//! data the CTSs allow, the CTSs the window allows).
//!
//! A QP event moves a connection's gate ([`Gate`]) only when the message
//! a lane may be waiting for is complete in order: the next message
//! arrived on every QP it uses (its data is in), or the oldest send
//! completed (a slot is free). Only then are the lanes waiting on it
//! tried again.

use super::{CTS_BYTES, Collective, Gate, QpRun, SPLIT_ALIGN, has};
use crate::time::Ps;
use crate::transport::{RcQp, Verb, WcStatus, WorkRequest};

impl Collective {
    /// The sending QP `i` of a connection: completions of its data, the
    /// CTSs that arrived; posts what the CTSs allow.
    pub fn drive_client(&mut self, i: usize, qp: &mut RcQp, now: Ps) -> Option<Ps> {
        let c = self.qps[i].conn;
        let mut completed = false;
        let mut news = std::mem::take(&mut self.qps[i].kick_client);
        while let Some(comp) = qp.poll_completion() {
            news = true;
            let st = &mut self.stats[i];
            st.completed += 1;
            st.last_completion_at = Some(comp.at);
            if comp.status == WcStatus::Success {
                st.bytes_completed += comp.bytes;
                self.qps[i].done += 1;
                completed = true;
            } else {
                st.failed += 1;
                st.first_error.get_or_insert(comp.status);
                self.fail(c, true, comp.status);
            }
        }
        if completed {
            self.complete_sends(c);
        }
        while let Some(m) = qp.poll_inbound() {
            news = true;
            if m.verb == Verb::Write {
                if let Some(n) = self.conns[c as usize].net.as_mut() {
                    n.cts_arrived += 1;
                }
                self.wake_conn_clients(c);
            }
        }
        self.progress(now);
        // What it may post changes only with news: a completion (SQ room,
        // a free slot), a CTS, a filled slot (which wakes it).
        if news || self.qps[i].kick_client {
            self.qps[i].kick_client = false;
            self.post_data(i, qp, now);
        }
        self.note_timer(now);
        if i == 0 {
            self.reported = self.next_timer();
            return self.reported;
        }
        None
    }

    /// The receiving QP `i` of a connection: data that arrived; QP 0 posts
    /// the CTSs the window allows, each after its receive WQEs.
    pub fn drive_server(&mut self, i: usize, qp: &mut RcQp, now: Ps) {
        let (c, q) = (self.qps[i].conn, self.qps[i].q);
        let mut news = std::mem::take(&mut self.qps[i].kick_server);
        while let Some(comp) = qp.poll_completion() {
            news = true;
            if comp.status != WcStatus::Success {
                self.fail(c, false, comp.status);
            }
        }
        let mut inbound = false;
        while let Some(m) = qp.poll_inbound() {
            news = true;
            if m.verb == Verb::WriteImm {
                self.qps[i].inbound += 1;
                inbound = true;
            }
        }
        if inbound {
            self.arrive_net(c);
        }
        self.progress(now);
        // CTSs and receive WQEs due change only with news: a completion
        // (SQ room), data consumed or an operation launched (which wake
        // QP 0), receive WQEs due on this QP (which wake it).
        if news || self.qps[i].kick_server {
            self.qps[i].kick_server = false;
            if !self.finished && q == 0 {
                self.post_cts(c, qp);
            }
            let run = &mut self.qps[i];
            let due = run.recv_due - run.recv_posted;
            if due > 0 && !self.finished {
                qp.post_recv(due as u32);
                run.recv_posted += due;
            }
        }
        self.note_timer(now);
    }

    /// The QPs of network connection `c` (collective QP indices).
    fn conn_qps(&self, c: u32) -> (usize, usize) {
        let n = self.conns[c as usize]
            .net
            .as_ref()
            .expect("a network connection");
        (n.qp0 as usize, (n.qp0 + n.nq) as usize)
    }

    /// Sends of `c` completed: its oldest messages complete in order free
    /// their slots.
    fn complete_sends(&mut self, c: u32) {
        let split = self.spec.knobs.split_data_on_qps;
        let (a, b) = self.conn_qps(c);
        let conn = &mut self.conns[c as usize];
        let before = conn.completed;
        while conn.completed < conn.filled
            && has(&self.qps[a..b], |q| q.done, conn.completed, split)
        {
            conn.completed += 1;
        }
        if conn.completed > before {
            self.gates[c as usize].slot_end = conn.completed + u64::from(conn.spec.window);
            self.ready.senders_of(c);
        }
    }

    /// Data of `c` arrived: its next messages, if every WR of each is in.
    fn arrive_net(&mut self, c: u32) {
        let split = self.spec.knobs.split_data_on_qps;
        let (a, b) = self.conn_qps(c);
        let g: &mut Gate = &mut self.gates[c as usize];
        let before = g.arrived;
        while has(&self.qps[a..b], |q| q.inbound, g.arrived, split) {
            g.arrived += 1;
        }
        if g.arrived > before {
            self.ready.receivers_of(c);
        }
    }

    pub(super) fn wake_conn_clients(&mut self, c: u32) {
        if let Some(n) = &self.conns[c as usize].net {
            let (qp0, nq) = (n.qp0, n.nq);
            for q in 0..nq {
                self.wake_client(qp0 + q);
            }
        }
    }

    fn post_cts(&mut self, c: u32, qp: &mut RcQp) {
        let split = self.spec.knobs.split_data_on_qps;
        let conn = &mut self.conns[c as usize];
        let window = u64::from(conn.spec.window);
        let net = conn.net.as_mut().unwrap();
        let qps: &mut [QpRun] = &mut self.qps[net.qp0 as usize..(net.qp0 + net.nq) as usize];
        let mut wake = Vec::new();
        while net.cts_posted < conn.consumed + window && net.cts_posted < conn.known {
            let m = net.cts_posted;
            // A receive WQE on every QP the message uses, before its CTS.
            let (lo, hi) = if split {
                (0, net.nq)
            } else {
                let q = (m % u64::from(net.nq)) as u32;
                (q, q + 1)
            };
            for qq in lo..hi {
                let run = &mut qps[qq as usize];
                run.recv_due += 1;
                if qq == 0 {
                    let due = run.recv_due - run.recv_posted;
                    qp.post_recv(due as u32);
                    run.recv_posted += due;
                } else {
                    wake.push(net.qp0 + qq);
                }
            }
            if qp
                .post_send(WorkRequest::new(m, Verb::Write, CTS_BYTES))
                .is_err()
            {
                break;
            }
            net.cts_posted += 1;
        }
        for w in wake {
            self.wake_server(w);
        }
    }

    fn post_data(&mut self, i: usize, qp: &mut RcQp, now: Ps) {
        if self.finished {
            return;
        }
        let (c, q) = (self.qps[i].conn, self.qps[i].q);
        let split = self.spec.knobs.split_data_on_qps;
        let conn = &mut self.conns[c as usize];
        let net = conn.net.as_mut().unwrap();
        let nq = u64::from(net.nq);
        let window = u64::from(conn.spec.window.max(1));
        let run = &mut self.qps[i];
        loop {
            let k = run.posted;
            let m = if split { k } else { k * nq + u64::from(q) };
            if m >= conn.filled || m >= net.cts_arrived {
                break;
            }
            let len = self.sizes[conn.sizes_at as usize + (m % window) as usize];
            let len = if split {
                let share = len.div_ceil(nq).div_ceil(SPLIT_ALIGN) * SPLIT_ALIGN;
                share.min(len.saturating_sub(u64::from(q) * share))
            } else {
                len
            };
            if qp
                .post_send(WorkRequest::new(m, Verb::WriteImm, len))
                .is_err()
            {
                break;
            }
            run.posted += 1;
            let st = &mut self.stats[i];
            st.posted += 1;
            st.first_post_at.get_or_insert(now);
        }
    }
}
