//! What the process reads from the machine at run time: the wall clock and
//! the system's random numbers; and what a command prints on standard output. Kept out of `domain`, whose rules stay pure
//! (they take times and random bytes as arguments), and in one place, so
//! every timestamp and id of the product comes from here.

use time::OffsetDateTime;

use inbox_domain::clock::format;
use inbox_domain::ids::{Kind, id_from};

pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// Now, in the product's fixed-width timestamp format.
pub fn now_string() -> String {
    format(now())
}

pub fn unix_now() -> u64 {
    u64::try_from(now().unix_timestamp()).unwrap_or(0)
}

/// `N` bytes from the kernel's CSPRNG (`getrandom(2)`): ids, nonces,
/// secrets. (aws-lc, for TLS, seeds from the same source: its CPU-jitter
/// entropy source, 30–50 ms of a cold start, is left out of the build,
/// `.cargo/config.toml`.) The kernel's generator never fails once the system
/// has booted; should it, the process cannot make a safe value and stops.
pub fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if let Err(error) = getrandom::fill(&mut bytes) {
        // Cannot happen on a booted Linux (getrandom(2) blocks only before the
        // pool is first seeded); if it did, no safe nonce, id or secret could
        // be made, and predictable ones must never be.
        panic!("the system has no randomness: {error}");
    }
    bytes
}

/// Seeds aws-lc's random generator (used by TLS handshakes) on a thread of its
/// own, so the first HTTPS call of a cold start does not wait for it. Called
/// first thing by the binaries; INIT goes on meanwhile. Keep what it returns
/// until `main` returns (`WarmUp`).
pub fn warm_crypto() -> WarmUp {
    WarmUp::run(|| {
        let mut byte = [0u8; 1];
        let _ = aws_lc_rs::rand::fill(&mut byte);
    })
}

/// A warm-up thread, joined when this is dropped. A short command
/// (`dev-token`, `seed`) can be done before the thread is: the process's exit
/// then runs aws-lc's destructors while the thread is inside aws-lc, whose
/// next lock aborts the process (SIGABRT, no message; seen in about one
/// `dev-token` in 300). Joined at the end of `main`, the thread is always done
/// first; it takes milliseconds.
#[must_use = "dropping it waits for the warm-up: keep it until main returns"]
pub struct WarmUp(Option<std::thread::JoinHandle<()>>);

impl WarmUp {
    fn run(work: impl FnOnce() + Send + 'static) -> WarmUp {
        WarmUp(std::thread::Builder::new().name("warm-crypto".into()).spawn(work).ok())
    }
}

impl Drop for WarmUp {
    fn drop(&mut self) {
        if let Some(thread) = self.0.take() {
            let _ = thread.join();
        }
    }
}

/// Hands the pages the allocator holds free back to the kernel now. mimalloc
/// keeps a freed page a second before giving it back (its `purge_delay`), so
/// a page a busy server frees is there for the next requests instead of being
/// returned and faulted in again; with no delay, a server that had served
/// reads at concurrency 32 could take a page fault on every `server/discover`
/// after them (45 % more CPU a request; `make bench` counts faults per
/// request). This is for a server that has gone idle (the local server when
/// its last client disconnects): nothing runs the allocator then, so nothing
/// else would give that memory back. A Lambda container is frozen between
/// events and billed by its configured memory, not by what it holds.
///
/// Harmless where mimalloc is not the global allocator (the tests): its heaps
/// are empty there.
pub fn release_free_memory() {
    // SAFETY: mi_collect takes no pointer; it frees the calling thread's
    // empty pages and purges the free memory of mimalloc's arenas, which is
    // safe on any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

/// A new random id of `kind`.
pub fn new_id(kind: Kind) -> String {
    id_from(kind, &random())
}

/// A new random id of `kind` for a write-heavy record of a workspace with
/// `shards`: it names the write shard the record is stored in.
pub fn new_id_in(kind: Kind, shards: &inbox_domain::Shards) -> String {
    sharded(new_id(kind), shards)
}

/// `id` placed in a random write shard of `shards`.
pub fn sharded(id: String, shards: &inbox_domain::Shards) -> String {
    let shard = shards.pick(unix_now(), u32::from_le_bytes(random()));
    inbox_domain::ids::with_shard(id, shard)
}

/// Writes `text` to standard output, for the commands that print an answer (`admin`,
/// `openapi`, `--help`, `dev-token`). A reader that went away (`… | head`) is not a failure:
/// nothing is left to read the rest, so it ends quietly instead of panicking as `println!`
/// does. Any other failure (a full disk behind a redirect) is returned, so the command can
/// exit with an error rather than leave half a document behind with success.
pub fn print_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_warm_up_is_done_before_its_guard_is_gone() {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&done);
        let warm = super::WarmUp::run(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        drop(warm);
        assert!(done.load(std::sync::atomic::Ordering::SeqCst), "dropping the guard waited for the thread");
    }

    use super::*;

    #[test]
    fn new_ids_are_distinct() {
        assert_ne!(new_id(Kind::Job), new_id(Kind::Job));
        assert!(inbox_domain::ids::is_id(Kind::Job, &new_id(Kind::Job)));
    }
}
