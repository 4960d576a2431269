//! Seeded Monte Carlo replicates, run in parallel and returned in replicate order, so that every
//! reduction over them is independent of the thread count.

use rayon::prelude::*;

/// Runs `replicate(r)` for `r = 0..replicates` on the current rayon pool; the result is in
/// replicate order whatever the number of threads.
pub fn replicates<T: Send>(replicates: usize, replicate: impl Fn(u64) -> T + Sync + Send) -> Vec<T> {
    (0..replicates as u64).into_par_iter().map(replicate).collect()
}

/// `f(item)` for every item, run in parallel on the current rayon pool; the results are in the
/// items' order whatever the number of threads.
pub fn in_order<I: Send, T: Send>(items: Vec<I>, f: impl Fn(I) -> T + Sync + Send) -> Vec<T> {
    items.into_par_iter().map(f).collect()
}

/// Runs `job` on a pool of `threads` workers (rayon's global pool when `None`).
///
/// # Errors
/// [`crate::Error::ThreadPool`] naming the failure when the pool cannot be built.
pub fn in_pool<T: Send>(threads: Option<usize>, job: impl FnOnce() -> T + Send) -> crate::Result<T> {
    match threads {
        Some(t) => {
            Ok(rayon::ThreadPoolBuilder::new().num_threads(t).build().map_err(|e| crate::Error::ThreadPool(format!("a pool of {t}: {e}")))?.install(job))
        }
        None => Ok(job()),
    }
}
