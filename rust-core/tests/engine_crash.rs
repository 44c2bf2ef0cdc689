//! The exactly-once crash harness: a driver writes keyed input while the counter
//! application runs as a child process that is SIGKILLed at random moments and restarted;
//! its counting task keeps its RocksDB store itself, as the JVM's task runner does, so the
//! harness checks the path the engine ships;
//! a verifier then recomputes the counts from the input and compares them with the
//! committed output (no loss, no duplicate). Each restart logs how long it took to reach
//! processing and how many changelog records it replayed.
//!
//! SLUICE_CRASH_KILLS (default 20), SLUICE_CRASH_RECORDS (default 20000) and
//! SLUICE_CRASH_WORDS (distinct keys, i.e. state size; default 200) tune the run.
//! Run through `compat-tests/local-broker/with-broker`.

mod engine_support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use engine_support::*;
use sluice_core::engine::{EngineConfig, RestoreListener};
use sluice_core::store::TopicPartition;

const CHILD_APPLICATION_ID: &str = "SLUICE_CRASH_CHILD_APPLICATION_ID";
const CHILD_STATE_DIR: &str = "SLUICE_CRASH_CHILD_STATE_DIR";
/// Changelog partitions of the counter (one per counting task).
const CHANGELOG_PARTITIONS: u64 = 4;

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Prints `READY <ms since start> <records replayed>` once every changelog partition is
/// restored.
struct ReadyReporter {
    started: Instant,
    replayed: AtomicU64,
    ended: AtomicU64,
}

impl RestoreListener for ReadyReporter {
    fn on_restore_end(&self, _: &str, _: &TopicPartition, restored: u64) {
        let replayed = self.replayed.fetch_add(restored, Ordering::SeqCst) + restored;
        if self.ended.fetch_add(1, Ordering::SeqCst) + 1 == CHANGELOG_PARTITIONS {
            println!("READY {} {replayed}", self.started.elapsed().as_millis());
        }
    }
}

#[test]
#[ignore = "the crash harness's application: runs only as its child process"]
fn crash_child_application() {
    let started = Instant::now();
    let application_id = std::env::var(CHILD_APPLICATION_ID).expect("run by the crash harness");
    let state_dir = std::env::var(CHILD_STATE_DIR).expect("run by the crash harness");
    let input = format!("{application_id}-input");
    let output = format!("{application_id}-output");
    let mut properties = counter_properties(
        &application_id,
        "exactly_once_v2",
        std::path::Path::new(&state_dir),
    );
    properties.insert("num.stream.threads".into(), "1".into());
    // Static membership: a restarted instance takes its predecessor's place at once.
    properties.insert(
        "main.consumer.group.instance.id".into(),
        application_id.clone(),
    );
    let factory = Arc::new(CounterFactory::new(
        &application_id,
        &output,
        std::path::Path::new(&state_dir),
    ));
    let reporter = Arc::new(ReadyReporter {
        started,
        replayed: AtomicU64::new(0),
        ended: AtomicU64::new(0),
    });
    let engine = start_engine(
        EngineConfig::from_properties(&properties).unwrap(),
        &counter_topology(&input, &output),
        factory,
        Some(reporter),
        false,
    )
    .expect("engine starts");
    while !engine.has_failed() {
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("engine failed: {:?}", engine.close());
}

struct RunningChild {
    child: Child,
    lines: mpsc::Receiver<String>,
}

fn spawn_child(application_id: &str, state_dir: &std::path::Path) -> RunningChild {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child_application",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_APPLICATION_ID, application_id)
        .env(CHILD_STATE_DIR, state_dir)
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the application");
    let stdout = child.stdout.take().unwrap();
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    RunningChild { child, lines }
}

/// Waits for the child's READY line: (ms to reach processing, changelog records replayed).
fn await_ready(child: &mut RunningChild) -> (u64, u64) {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let wait = deadline.saturating_duration_since(Instant::now());
        let line = child.lines.recv_timeout(wait).unwrap_or_else(|_| {
            let _ = child.child.kill();
            panic!("the application did not become ready")
        });
        if let Some(rest) = line.strip_prefix("READY ") {
            let mut fields = rest.split(' ').map(|f| f.parse::<u64>().unwrap());
            return (fields.next().unwrap(), fields.next().unwrap());
        }
    }
}

/// A small xorshift generator: kill moments need spread, not quality.
struct Jitter(u64);

impl Jitter {
    fn next_in(&mut self, low: u64, high: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        low + self.0 % (high - low)
    }
}

#[test]
fn sigkilled_exactly_once_counter_neither_loses_nor_duplicates() {
    let kills: usize = env_or("SLUICE_CRASH_KILLS", 20);
    let records: u64 = env_or("SLUICE_CRASH_RECORDS", 20_000);
    let distinct: u64 = env_or("SLUICE_CRASH_WORDS", 200);
    let application_id = unique("crash-counter");
    let input = format!("{application_id}-input");
    let output = format!("{application_id}-output");
    create_topic(&input, 4);
    create_topic(&output, 4);
    let state = tempfile::tempdir().unwrap();
    let all_words = words(0, records, distinct);

    // The driver writes the input at a pace that spans the kills (about 1.5 s each).
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (input, all_words, done) = (input.clone(), all_words.clone(), Arc::clone(&done));
        std::thread::spawn(move || {
            let producer = input_producer();
            let chunks = (kills as u64 * 15).max(1);
            let chunk = (records / chunks).max(1) as usize;
            for (i, part) in all_words.chunks(chunk).enumerate() {
                produce_words(&producer, &input, (i * chunk) as u64, part);
                std::thread::sleep(Duration::from_millis(100));
            }
            done.store(true, Ordering::SeqCst);
        })
    };

    let mut jitter = Jitter(Instant::now().elapsed().as_nanos() as u64 | 0x9e37_79b9);
    let mut restarts = Vec::new();
    for _ in 0..kills {
        let mut child = spawn_child(&application_id, state.path());
        restarts.push(await_ready(&mut child));
        std::thread::sleep(Duration::from_millis(jitter.next_in(200, 1_500)));
        child.child.kill().expect("SIGKILL");
        child.child.wait().unwrap();
    }
    writer.join().unwrap();
    assert!(done.load(Ordering::SeqCst));

    let mut last = spawn_child(&application_id, state.path());
    restarts.push(await_ready(&mut last));
    let verify_started = Instant::now();
    let mut output_records = Vec::new();
    while verify_started.elapsed() < Duration::from_secs(120) {
        output_records = read_all(&output, "read_committed");
        if output_records.len() as u64 >= records {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    last.child.kill().unwrap();
    last.child.wait().unwrap();

    println!("restart  ms-to-processing  changelog-records-replayed");
    for (i, (ms, replayed)) in restarts.iter().enumerate() {
        println!("{i:>7}  {ms:>16}  {replayed:>26}");
    }
    let replays: Vec<u64> = restarts.iter().skip(1).map(|r| r.1).collect();
    let times: Vec<u64> = restarts.iter().skip(1).map(|r| r.0).collect();
    println!(
        "{kills} kills, {records} records, {distinct} keys: replayed max {} mean {:.0}; \
         ms to processing max {} mean {:.0}",
        replays.iter().max().unwrap_or(&0),
        replays.iter().sum::<u64>() as f64 / replays.len().max(1) as f64,
        times.iter().max().unwrap_or(&0),
        times.iter().sum::<u64>() as f64 / times.len().max(1) as f64,
    );
    assert_eq!(verify_counts(&output_records, &all_words), records as usize);
    // A restart replays at most what was written since the store's last commit, never the
    // whole state: each key holds one entry, so a full restore would replay every key.
    let bound = distinct.max(1_000);
    assert!(
        replays.iter().all(|r| *r < bound) || distinct <= 1_000,
        "a restart replayed more than the state: {replays:?}"
    );
}
