//! What the I/O thread does to itself when it starts: its name, signal mask, CPU affinity
//! and scheduling, from the context's thread options (ZMQ_THREAD_*), as libzmq does for
//! its background threads.

use std::collections::BTreeSet;

/// libzmq's "leave it as it is" value of ZMQ_THREAD_PRIORITY and ZMQ_THREAD_SCHED_POLICY.
pub(crate) const THREAD_DEFAULT: i32 = -1;

/// The context's thread options, read when the I/O thread starts (as in libzmq, setting
/// them later changes nothing for a thread already running).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IoThreadOptions {
    /// ZMQ_THREAD_PRIORITY, or `THREAD_DEFAULT`.
    pub(crate) priority: i32,
    /// ZMQ_THREAD_SCHED_POLICY (a `SCHED_*` value), or `THREAD_DEFAULT`.
    pub(crate) sched_policy: i32,
    /// ZMQ_THREAD_AFFINITY_CPU_ADD less ..._REMOVE; empty = no affinity set.
    pub(crate) affinity: BTreeSet<i32>,
    /// ZMQ_THREAD_NAME_PREFIX, if set.
    pub(crate) name_prefix: Option<i32>,
}

impl Default for IoThreadOptions {
    fn default() -> Self {
        IoThreadOptions {
            priority: THREAD_DEFAULT,
            sched_policy: THREAD_DEFAULT,
            affinity: BTreeSet::new(),
            name_prefix: None,
        }
    }
}

impl IoThreadOptions {
    /// The thread's name: libzmq's `ZMQbg/IO/0`, behind `<prefix>/` when a prefix is set
    /// (tools that list threads by name find ours where they find libzmq's). Linux keeps
    /// the first 15 bytes, as it does for libzmq's.
    pub(crate) fn thread_name(&self) -> String {
        match self.name_prefix {
            Some(prefix) => format!("{prefix}/ZMQbg/IO/0"),
            None => "ZMQbg/IO/0".to_owned(),
        }
    }

    /// Applies affinity and scheduling to the calling thread. Best effort: where libzmq
    /// aborts the process (a CPU the machine lacks, a policy or priority the kernel
    /// refuses, raising priority without the privilege), the thread keeps what it had.
    pub(crate) fn apply_to_current_thread(&self) {
        self.apply_affinity();
        self.apply_scheduling();
    }

    fn apply_affinity(&self) {
        if self.affinity.is_empty() {
            return;
        }
        // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET only write inside it (numbers
        // past its size are left out: CPU_SET would index past it); sched_setaffinity(0,
        // ..) changes only this thread and reads `size_of::<cpu_set_t>()` bytes of `set`.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_ZERO(&mut set);
            for &cpu in &self.affinity {
                if (0..libc::CPU_SETSIZE).contains(&cpu) {
                    libc::CPU_SET(cpu as usize, &mut set);
                }
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }

    fn apply_scheduling(&self) {
        if self.priority == THREAD_DEFAULT && self.sched_policy == THREAD_DEFAULT {
            return;
        }
        // SAFETY: sched_param is plain data filled by pthread_getschedparam before use;
        // both calls act on this thread only.
        let realtime = unsafe {
            let mut policy: libc::c_int = 0;
            let mut param: libc::sched_param = std::mem::zeroed();
            libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param);
            if self.sched_policy != THREAD_DEFAULT {
                policy = self.sched_policy;
            }
            let realtime = policy == libc::SCHED_FIFO || policy == libc::SCHED_RR;
            if self.priority != THREAD_DEFAULT {
                // Non-real-time policies have no priority but 0; the niceness below
                // stands for it.
                param.sched_priority = if realtime { self.priority } else { 0 };
            }
            libc::pthread_setschedparam(libc::pthread_self(), policy, &param);
            realtime
        };
        if !realtime && self.priority != THREAD_DEFAULT {
            // libzmq's documented behaviour: under a time-sharing policy any priority
            // means the highest niceness, -20 (Linux applies nice to the calling thread).
            // SAFETY: nice has no memory effects; a refusal (EPERM) is ignored.
            unsafe { libc::nice(-20) };
        }
    }
}

/// Blocks every signal on the I/O thread, so that signals go to the application's threads
/// (which see EINTR from blocking calls, as with libzmq).
pub(crate) fn block_signals() {
    // SAFETY: sigset_t is plain data initialised by sigfillset before use; the call only
    // changes this thread's signal mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_libzmq() {
        let mut o = IoThreadOptions::default();
        assert_eq!(o.thread_name(), "ZMQbg/IO/0");
        o.name_prefix = Some(7);
        assert_eq!(o.thread_name(), "7/ZMQbg/IO/0");
        o.name_prefix = Some(-5);
        assert_eq!(o.thread_name(), "-5/ZMQbg/IO/0");
    }

    #[test]
    fn affinity_is_applied_to_the_calling_thread() {
        let o = IoThreadOptions {
            affinity: [0].into_iter().collect(),
            ..IoThreadOptions::default()
        };
        let allowed = std::thread::spawn(move || {
            o.apply_to_current_thread();
            // SAFETY: plain data, filled by the kernel.
            unsafe {
                let mut set: libc::cpu_set_t = std::mem::zeroed();
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
                (0..libc::CPU_SETSIZE as usize)
                    .filter(|&c| libc::CPU_ISSET(c, &set))
                    .collect::<Vec<_>>()
            }
        })
        .join()
        .unwrap();
        assert_eq!(allowed, vec![0]);
    }

    #[test]
    fn refused_settings_leave_the_thread_running() {
        // SCHED_RR without a priority, and CPUs the machine lacks: libzmq aborts on both.
        let o = IoThreadOptions {
            sched_policy: libc::SCHED_RR,
            affinity: [100_000].into_iter().collect(),
            ..IoThreadOptions::default()
        };
        let policy = std::thread::spawn(move || {
            o.apply_to_current_thread();
            // SAFETY: plain data, filled by the call.
            unsafe {
                let mut policy = 0;
                let mut param: libc::sched_param = std::mem::zeroed();
                libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param);
                policy
            }
        })
        .join()
        .unwrap();
        assert_eq!(policy, libc::SCHED_OTHER);
    }
}
