//! Progress for a log: one line every interval while a phase runs.
//!
//! On a terminal the command line draws a bar; in a log (CI, a batch job, output piped to a
//! file) a bar draws nothing, and a search of a million evaluations or a long sweep would be
//! silent for half an hour. [`ProgressLines`] writes, every `interval` while a phase runs,
//!
//! ```text
//! fedbounds: 40 searches: 12/40 after 2m 30s, about 5m 30s left
//! ```
//!
//! and, once a phase that printed a line is over, `fedbounds: 40 searches: 40/40 done in 7m 58s`.
//! A phase shorter than `interval` prints nothing, so short runs keep a clean log. The lines come
//! from a timer thread, so a phase whose steps are long (one claim searched for minutes) is still
//! seen to be alive.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::family::Progress;

/// Where the lines go (standard error in the command line; a buffer in tests).
pub type Sink = Arc<Mutex<dyn Write + Send>>;

/// The running phase: its step counter, the timer thread and the channel that stops it.
struct Phase {
    done: Arc<AtomicUsize>,
    stop: mpsc::Sender<()>,
    timer: JoinHandle<()>,
}

/// [`Progress`] as a line every `interval` (see the module documentation).
pub struct ProgressLines {
    interval: Duration,
    sink: Sink,
    phase: Mutex<Option<Phase>>,
}

impl ProgressLines {
    /// Lines every `interval` into `sink`.
    pub fn new(interval: Duration, sink: Sink) -> Self {
        Self { interval, sink, phase: Mutex::new(None) }
    }

    /// Lines every `interval` on standard error.
    pub fn on_stderr(interval: Duration) -> Self {
        Self::new(interval, Arc::new(Mutex::new(std::io::stderr())))
    }
}

/// `elapsed` as `1h 2m 3s`, `2m 3s` or `3s` (whole seconds).
pub fn human_duration(elapsed: Duration) -> String {
    let s = elapsed.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, min, sec) => format!("{min}m {sec}s"),
        (h, min, sec) => format!("{h}h {min}m {sec}s"),
    }
}

/// The line for `done` of `len` steps after `elapsed`: with the time left at the rate so far once
/// a step is done.
fn line(label: &str, done: usize, len: usize, elapsed: Duration) -> String {
    let left = match done {
        0 => String::new(),
        _ => format!(", about {} left", human_duration(elapsed.mul_f64(len.saturating_sub(done) as f64 / done as f64))),
    };
    format!("fedbounds: {label}: {done}/{len} after {}{left}", human_duration(elapsed))
}

fn write_line(sink: &Sink, text: &str) {
    // A log that cannot be written to must not stop the run.
    if let Ok(mut w) = sink.lock() {
        let _ = writeln!(w, "{text}");
        let _ = w.flush();
    }
}

impl Progress for ProgressLines {
    fn start(&self, len: usize, label: &str) {
        self.finish();
        let (stop, stopped) = mpsc::channel::<()>();
        let done = Arc::new(AtomicUsize::new(0));
        let (interval, sink, label, counter) = (self.interval, Arc::clone(&self.sink), label.to_string(), Arc::clone(&done));
        let timer = std::thread::spawn(move || {
            let started = Instant::now();
            let mut printed = false;
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                write_line(&sink, &line(&label, counter.load(Ordering::Relaxed), len, started.elapsed()));
                printed = true;
            }
            if printed {
                write_line(&sink, &format!("fedbounds: {label}: {}/{len} done in {}", counter.load(Ordering::Relaxed), human_duration(started.elapsed())));
            }
        });
        if let Ok(mut slot) = self.phase.lock() {
            *slot = Some(Phase { done, stop, timer });
        }
    }

    fn step(&self) {
        if let Ok(slot) = self.phase.lock() {
            if let Some(phase) = slot.as_ref() {
                phase.done.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn finish(&self) {
        let phase = self.phase.lock().ok().and_then(|mut slot| slot.take());
        if let Some(Phase { stop, timer, .. }) = phase {
            let _ = stop.send(());
            let _ = timer.join();
        }
    }
}

impl Drop for ProgressLines {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text written by `progress` run on lines every `interval`, given the buffer they go to.
    fn lines_of(progress: impl FnOnce(&ProgressLines, &Mutex<Vec<u8>>), interval: Duration) -> String {
        let buffer = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink: Sink = buffer.clone();
        let lines = ProgressLines::new(interval, sink);
        progress(&lines, &buffer);
        drop(lines);
        let bytes = buffer.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_phase_longer_than_the_interval_prints_its_count_and_end() {
        let text = lines_of(
            |p, buffer| {
                p.start(4, "4 searches");
                p.step();
                // Wait for the first line (however late the timer thread runs), then end the phase.
                let deadline = Instant::now() + Duration::from_secs(30);
                while buffer.lock().unwrap().is_empty() && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(5));
                }
                p.step();
                p.finish();
            },
            Duration::from_millis(20),
        );
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() >= 2, "{text}");
        assert!(lines[0].starts_with("fedbounds: 4 searches: 1/4 after ") && lines[0].contains(" left"), "{text}");
        assert!(lines[lines.len() - 1].starts_with("fedbounds: 4 searches: 2/4 done in "), "{text}");
    }

    #[test]
    fn a_phase_shorter_than_the_interval_prints_nothing() {
        let text = lines_of(
            |p, _| {
                p.start(3, "3 scenarios");
                p.step();
                p.finish();
                // A phase left running is stopped when the progress is dropped.
                p.start(2, "2 scenarios");
            },
            Duration::from_secs(60),
        );
        assert_eq!(text, "");
    }

    #[test]
    fn durations_and_time_left_read_as_people_write_them() {
        assert_eq!(human_duration(Duration::from_secs(59)), "59s");
        assert_eq!(human_duration(Duration::from_secs(150)), "2m 30s");
        assert_eq!(human_duration(Duration::from_secs(3723)), "1h 2m 3s");
        assert_eq!(line("x", 1, 4, Duration::from_secs(60)), "fedbounds: x: 1/4 after 1m 0s, about 3m 0s left");
        assert_eq!(line("x", 0, 4, Duration::from_secs(60)), "fedbounds: x: 0/4 after 1m 0s");
    }
}
