//! The QPN allocators every workload and collective draws from.

use std::collections::HashMap;

use rand_chacha::ChaCha8Rng;

use super::names::host_key;
use crate::diagnostic::{KeyPath, ModelError};
use crate::schema::{QpnAlloc, Scenario};
use rocesim_model::rng::component_rng;
use rocesim_model::transport::{DEFAULT_QPN_BASE, QpnAllocator};
use rocesim_model::world::World;
use rocesim_model::world::place::Endpoint;

/// The QPN allocators, one per RDMA device (interface), and their random
/// streams, one per host; shared by all workloads.
#[derive(Default)]
pub(super) struct Qpns {
    allocators: HashMap<(u32, u32), QpnAllocator>,
    rngs: HashMap<u32, ChaCha8Rng>,
}

impl Qpns {
    pub(super) fn allocate(
        &mut self,
        w: &World,
        sc: &Scenario,
        ep: &Endpoint,
        at: &KeyPath,
    ) -> Result<u32, ModelError> {
        let hc = &sc.hosts[ep.host as usize];
        let key = (ep.host, ep.iface);
        if let std::collections::hash_map::Entry::Vacant(e) = self.allocators.entry(key) {
            let a = match hc.qpn_alloc {
                QpnAlloc::Sequential => QpnAllocator::sequential(
                    hc.qpn_base.unwrap_or(DEFAULT_QPN_BASE),
                )
                .map_err(|e| {
                    let at = host_key(ep.host as usize).key("qpn_base");
                    ModelError::new(at, e.to_string())
                })?,
                QpnAlloc::Random => QpnAllocator::random(),
            };
            e.insert(a);
        }
        let rng = self.rngs.entry(ep.host).or_insert_with(|| {
            component_rng(w.seed, &format!("qpn:{}", w.hosts[ep.host as usize].name))
        });
        self.allocators
            .get_mut(&key)
            .unwrap()
            .allocate(rng)
            .map_err(|e| ModelError::new(at.key("qps"), e.to_string()))
    }
}
