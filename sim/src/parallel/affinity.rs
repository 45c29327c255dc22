//! Each part's thread on a CPU of its own, when the process may use
//! exactly two. Left to itself on such a machine, the kernel often starts
//! the worker on the coordinator's CPU (the one that woke it), where the
//! two take turns: the 2:1 star's windows took 0.20-0.25 s in most runs and
//! 0.11 s in the others; pinned, 0.11 s every time. With more CPUs there
//! are idle ones to move a thread to, and runs side by side (a sweep,
//! several processes) would all pin to the same two: the kernel places
//! them.

/// The two CPUs this process may run on, if it may use exactly two.
#[cfg(target_os = "linux")]
pub fn two_cpus() -> Option<[usize; 2]> {
    // SAFETY: cpu_set_t is plain data; the call fills it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
            .then_some(set)?
    };
    let mut cpus = (0..libc::CPU_SETSIZE as usize).filter(|&c| unsafe { libc::CPU_ISSET(c, &set) });
    let two = [cpus.next()?, cpus.next()?];
    cpus.next().is_none().then_some(two)
}

/// Puts the calling thread on `cpu` alone, until the guard is
/// dropped (then back on the CPUs it had).
#[cfg(target_os = "linux")]
pub fn pin(cpu: usize) -> Pinned {
    // SAFETY: as above; a failed call leaves the thread as it was.
    unsafe {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut old) != 0 {
            return Pinned(None);
        }
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        Pinned((libc::sched_setaffinity(0, size, &one) == 0).then_some(old))
    }
}

#[cfg(target_os = "linux")]
pub struct Pinned(Option<libc::cpu_set_t>);

#[cfg(target_os = "linux")]
impl Drop for Pinned {
    fn drop(&mut self) {
        if let Some(old) = &self.0 {
            // SAFETY: restores the mask read before pinning.
            unsafe {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), old);
            }
        }
    }
}

#[cfg(not(target_os = "linux"))]
pub fn two_cpus() -> Option<[usize; 2]> {
    None
}

#[cfg(not(target_os = "linux"))]
pub struct Pinned;

#[cfg(not(target_os = "linux"))]
pub fn pin(_: usize) -> Pinned {
    Pinned
}
