//! Seeded Monte Carlo replicates, run in parallel and returned in replicate order, so that every
//! reduction over them is independent of the thread count.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

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

/// `f(item)` for every item on the current rayon pool, the costliest first (`cost[i]` is item
/// `i`'s estimated cost): each worker takes the next item in that order when it is free, so a
/// long item does not start last and run alone. The results are in the items' order whatever the
/// number of threads (each item's result depends on that item only).
pub fn costliest_first<I: Send, T: Send>(items: Vec<I>, cost: &[f64], f: impl Fn(I) -> T + Sync + Send) -> Vec<T> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by(|&a, &b| cost.get(b).copied().unwrap_or(0.0).total_cmp(&cost.get(a).copied().unwrap_or(0.0)));
    let slots: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let done: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(slots.len()));
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().clamp(1, slots.len().max(1));
    (0..workers).into_par_iter().for_each(|_| {
        while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let item = slots[i].lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(item) = item {
                let result = f(item);
                done.lock().unwrap_or_else(PoisonError::into_inner).push((i, result));
            }
        }
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costliest_first_starts_the_costliest_and_returns_the_items_order() {
        let cost = [1.0, 5.0, 3.0, 4.0, 2.0];
        let items: Vec<usize> = (0..cost.len()).collect();
        let started = Mutex::new(Vec::new());
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                costliest_first(items.clone(), &cost, |i| {
                    started.lock().unwrap().push(i);
                    i * 10
                })
            })
        };
        assert_eq!(run(1), vec![0, 10, 20, 30, 40]);
        // On one worker the items start in decreasing cost, not in the items' order.
        assert_eq!(*started.lock().unwrap(), vec![1, 3, 2, 4, 0]);
        assert_eq!(run(2), vec![0, 10, 20, 30, 40]);
        assert!(costliest_first(Vec::<usize>::new(), &[], |i| i).is_empty());
    }
}
