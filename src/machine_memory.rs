//! How much memory this process may still take, read from the operating system.
//!
//! A run that asks for more memory than the machine gives aborts inside the allocator: Rust
//! cannot turn a failed allocation into an error. [`crate::error::require_memory`] therefore
//! compares a run's planned memory with the smallest of three readings as well as with its fixed
//! cap, before anything is allocated:
//!
//! - the address-space limit (`ulimit -v`, `RLIMIT_AS`) less the address space already mapped
//!   (`/proc/self/limits`, `VmSize` of `/proc/self/status`);
//! - the control group's memory limit less its usage (`memory.max` - `memory.current`, cgroup v2;
//!   `memory.limit_in_bytes` - `memory.usage_in_bytes`, v1);
//! - the memory the kernel says is available without swapping (`MemAvailable`, `/proc/meminfo`).
//!
//! Where a file is missing (not Linux) or says "unlimited", that reading is absent and only the
//! others and the fixed cap apply.

use std::fs;

/// A reading of how many more bytes this process may take, and which limit sets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Headroom {
    /// Bytes still free under the limit (0 when the limit is already reached).
    pub bytes: f64,
    /// The limit, as a person would look it up (e.g. `the address-space limit (ulimit -v)`).
    pub source: &'static str,
}

/// The smallest headroom over the three readings of the module doc; `None` when none of them is
/// readable or limited.
pub fn headroom() -> Option<Headroom> {
    [address_space(), control_group(), available()].into_iter().flatten().min_by(|a, b| a.bytes.total_cmp(&b.bytes))
}

/// `limit - used`, floored at 0; `None` when the limit is not a number ("unlimited", "max").
fn left(limit: &str, used: f64, source: &'static str) -> Option<Headroom> {
    let limit: f64 = limit.trim().parse().ok()?;
    Some(Headroom { bytes: (limit - used).max(0.0), source })
}

/// The value in kB of the line `key` of a `/proc` file such as `/proc/meminfo`, in bytes.
fn kib_line(text: &str, key: &str) -> Option<f64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kib: f64 = line[key.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kib * 1024.0)
}

/// `RLIMIT_AS` (soft) less the mapped address space `VmSize`.
fn address_space() -> Option<Headroom> {
    const KEY: &str = "Max address space";
    let limits = fs::read_to_string("/proc/self/limits").ok()?;
    let soft = limits.lines().find(|l| l.starts_with(KEY))?[KEY.len()..].split_whitespace().next()?.to_string();
    let mapped = kib_line(&fs::read_to_string("/proc/self/status").ok()?, "VmSize:")?;
    left(&soft, mapped, "the address-space limit (ulimit -v)")
}

/// The memory limit of this process's control group less its usage (v2, then v1).
fn control_group() -> Option<Headroom> {
    let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let v2_path = own.lines().find_map(|l| l.strip_prefix("0::")).unwrap_or("/").trim_end_matches('/').to_string();
    let pairs = [
        (format!("/sys/fs/cgroup{v2_path}/memory.max"), format!("/sys/fs/cgroup{v2_path}/memory.current")),
        ("/sys/fs/cgroup/memory.max".to_string(), "/sys/fs/cgroup/memory.current".to_string()),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes".to_string(), "/sys/fs/cgroup/memory/memory.usage_in_bytes".to_string()),
    ];
    pairs.iter().find_map(|(limit, usage)| {
        let used: f64 = fs::read_to_string(usage).ok()?.trim().parse().ok()?;
        let limit = fs::read_to_string(limit).ok()?;
        // cgroup v1 writes "no limit" as a number near 2^63.
        left(&limit, used, "the control group's memory limit").filter(|h| h.bytes < 1e18)
    })
}

/// `MemAvailable` of `/proc/meminfo`.
fn available() -> Option<Headroom> {
    let bytes = kib_line(&fs::read_to_string("/proc/meminfo").ok()?, "MemAvailable:")?;
    Some(Headroom { bytes, source: "the memory available on this machine (MemAvailable)" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_that_is_not_a_number_is_no_limit_and_a_reached_one_leaves_nothing() {
        assert_eq!(left("unlimited", 5.0, "x"), None);
        assert_eq!(left("max\n", 5.0, "x"), None);
        assert_eq!(left("100\n", 30.0, "x").unwrap().bytes, 70.0);
        assert_eq!(left("100", 130.0, "x").unwrap().bytes, 0.0);
        let status = "Name:\tx\nVmPeak:\t  9 kB\nVmSize:\t    2048 kB\n";
        assert_eq!(kib_line(status, "VmSize:"), Some(2048.0 * 1024.0));
        assert_eq!(kib_line(status, "VmRSS:"), None);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn on_linux_the_available_memory_is_read_and_bounds_the_headroom() {
        let avail = available().expect("/proc/meminfo has MemAvailable");
        assert!(avail.bytes > 0.0 && avail.bytes.is_finite());
        // The minimum over the readings is not above this one (up to what moved between the reads).
        assert!(headroom().unwrap().bytes <= avail.bytes + 1e9);
    }
}
