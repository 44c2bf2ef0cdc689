//! Handing the native memory that was freed back to the operating system.
//!
//! glibc's allocator keeps what is freed for reuse, per arena, and after a large block is
//! freed it raises the size below which it keeps it (up to 32 MiB, trimmed only above twice
//! that). Memory allocated on one thread and freed on another, as librdkafka's fetched
//! messages are, leaves the arenas holding far more than is in use. Handing what
//! is free back once a second, for one walk of the arenas, took word count's memory outside
//! the Java heap at its peak from 202-206 MB to 172-182 MB (exactly-once, one thread).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often freed memory is handed back, whichever thread gets to it first.
const RELEASE_INTERVAL: Duration = Duration::from_secs(1);

/// Hands freed native memory back to the operating system, unless another thread of the
/// process did within the last [`RELEASE_INTERVAL`].
pub(crate) fn release_if_due() {
    static START: OnceLock<Instant> = OnceLock::new();
    static LAST_RELEASE_MS: AtomicU64 = AtomicU64::new(0);
    let now_ms = START.get_or_init(Instant::now).elapsed().as_millis() as u64;
    let last = LAST_RELEASE_MS.load(Ordering::Relaxed);
    if now_ms.saturating_sub(last) < RELEASE_INTERVAL.as_millis() as u64
        || LAST_RELEASE_MS
            .compare_exchange(last, now_ms, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    release();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release() {
    extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: glibc's malloc_trim only returns free pages of the allocator's arenas to the
    // system, under the arenas' own locks; it takes no pointer.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release() {}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    fn resident_bytes() -> u64 {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * 4096
    }

    #[test]
    fn memory_freed_between_live_blocks_goes_back_to_the_system() {
        const BLOCKS: usize = 1024;
        // 64 KiB blocks stay below glibc's mmap threshold, so they come from an arena; a small
        // live block after each keeps them apart once freed, so no free trims them.
        let mut kept = Vec::with_capacity(BLOCKS);
        let mut freed = Vec::with_capacity(BLOCKS);
        for i in 0..BLOCKS {
            freed.push(vec![(i % 251) as u8 + 1; 64 << 10]);
            kept.push(vec![(i % 251) as u8 + 1; 16]);
        }
        // Measured with the blocks live: another test's engine thread may hand them back too.
        let live = resident_bytes();
        drop(freed);
        release();
        let after = resident_bytes();
        assert!(
            live.saturating_sub(after) >= 32 << 20,
            "64 MiB freed, resident {live} -> {after} bytes"
        );
        assert_eq!(kept.len(), BLOCKS);
    }
}
