//! An engine instance: resolves the topology, creates internal topics, has the global thread
//! restore the global stores, and runs `num.stream.threads` threads (and the global thread)
//! until closed.
//! Stream threads can be added and removed while it runs, and one that failed can be taken
//! out and replaced, as Kafka Streams does with its stream threads. Processing can be paused
//! and resumed, as `KafkaStreams.pause` and `resume` do.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::engine::budget::UncommittedBytesBudget;
use crate::engine::clients::KafkaThreadClients;
use crate::engine::config::EngineConfig;
use crate::engine::error::{joined, Error, Result};
use crate::engine::global::{self, GlobalThreadSetup};
use crate::engine::internal_topics;
use crate::engine::metrics::{ConsumerLags, EngineMetrics, MetricsSnapshot};
use crate::engine::process_id;
use crate::engine::processor::ProcessorFactory;
use crate::engine::restore::RestoreListener;
use crate::engine::state_owners::StateOwners;
use crate::engine::task_manager::ThreadShared;
use crate::engine::thread as stream_thread;
use crate::engine::topology::TopologyDescription;
use crate::kafka::{Admin, GroupMembership};

/// A running engine instance.
pub struct Engine {
    /// What every stream thread shares; new threads get it too.
    shared: Arc<ThreadShared>,
    /// The stream threads by index (1-based, as Kafka Streams numbers them).
    threads: BTreeMap<usize, StreamThread>,
    /// Threads asked to stop that did not stop within the time they were given, by index: their
    /// numbers stay taken until [`reap_retired`](Self::reap_retired) finds them ended.
    retiring: BTreeMap<usize, StreamThread>,
    /// What the first reaped thread that failed while retiring stopped with, for close to return.
    retired_error: Option<Error>,
    /// The index of the failed thread last taken out, until the next thread is added: Kafka
    /// Streams starts a failed thread's replacement while the failed one is still shutting
    /// down, so the replacement never takes its number (a thread added later may).
    replacing: Option<usize>,
    /// The global thread, when the topology has global stores.
    global: Option<JoinHandle<Result<()>>>,
    /// Stops the global thread; set once the stream threads, which read its stores, stopped.
    global_stop: Arc<AtomicBool>,
    metrics: Arc<EngineMetrics>,
}

/// One stream thread and the flag that stops it.
struct StreamThread {
    handle: JoinHandle<Result<()>>,
    stop: Arc<AtomicBool>,
}

/// How often [`Engine::remove_thread`] looks whether the thread it stopped has ended.
const STOP_POLL_INTERVAL: Duration = Duration::from_millis(10);

impl Engine {
    /// Prepares the internal topics of `topology`, restores its global stores and starts
    /// the threads, with processing paused when `paused` (see [`set_paused`]). Tasks are
    /// created by `factory` as partitions are assigned to the threads' members, which
    /// `membership` makes; `restore_listener` hears about restoration.
    ///
    /// [`set_paused`]: Self::set_paused
    pub fn start(
        config: EngineConfig,
        topology: &TopologyDescription,
        factory: Arc<dyn ProcessorFactory>,
        membership: Arc<dyn GroupMembership>,
        restore_listener: Option<Arc<dyn RestoreListener>>,
        paused: bool,
    ) -> Result<Engine> {
        let admin = Admin::new(&config.admin_config(), config.client_timeout)?;
        let resolved = internal_topics::prepare(
            &config.application_id,
            topology,
            &admin,
            config.replication_factor,
        )?;
        let process_id =
            process_id::load_or_create(&config.application_dir()).map_err(Error::StateDirectory)?;
        let uncommitted_bytes = Arc::new(UncommittedBytesBudget::new(
            config.uncommitted_max_bytes,
            !resolved.global_stores.is_empty(),
        ));
        let config = Arc::new(config);
        let global_stop = Arc::new(AtomicBool::new(false));
        let metrics = Arc::new(EngineMetrics::default());
        // Like Kafka Streams, no task runs before the global stores are complete.
        let global = global::start(
            GlobalThreadSetup {
                stores: resolved.global_stores.clone(),
                factory: Arc::clone(&factory),
                config: Arc::clone(&config),
                listener: restore_listener.clone(),
                budget: Arc::clone(&uncommitted_bytes),
            },
            Arc::clone(&global_stop),
        )?;
        let clients = Arc::new(KafkaThreadClients {
            config: Arc::clone(&config),
            membership,
        });
        let shared = Arc::new(ThreadShared {
            config,
            topology: RwLock::new(Arc::new(resolved)),
            factory,
            restore_listener,
            metrics: Arc::clone(&metrics),
            process_id,
            uncommitted_bytes,
            admin,
            clients,
            paused: AtomicBool::new(paused),
            state_owners: Arc::new(StateOwners::default()),
        });
        let mut engine = Engine {
            shared,
            threads: BTreeMap::new(),
            retiring: BTreeMap::new(),
            retired_error: None,
            replacing: None,
            global,
            global_stop,
            metrics,
        };
        for _ in 0..engine.shared.config.num_stream_threads {
            if let Err(error) = engine.add_thread() {
                let _ = engine.close();
                return Err(error);
            }
        }
        Ok(engine)
    }

    /// Resolves `topology` anew, when the topics its patterns match changed, creating the
    /// internal topics it lacks now; each stream thread subscribes to its topics at its next
    /// turn, and the group rebalances onto them.
    pub fn update_topology(&self, topology: &TopologyDescription) -> Result<()> {
        let resolved = internal_topics::prepare(
            &self.shared.config.application_id,
            topology,
            &self.shared.admin,
            self.shared.config.replication_factor,
        )?;
        *self
            .shared
            .topology
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Arc::new(resolved);
        Ok(())
    }

    /// Starts a stream thread with the lowest index no running or retiring thread has (nor, for
    /// a replacement, the failed thread it replaces), as Kafka Streams numbers a thread it adds
    /// or replaces; returns its name.
    pub fn add_thread(&mut self) -> Result<String> {
        let replacing = self.replacing.take();
        let index = (1..)
            .find(|index| {
                !self.threads.contains_key(index)
                    && !self.retiring.contains_key(index)
                    && replacing != Some(*index)
            })
            .expect("fewer threads than indexes");
        let name = self.thread_name(index);
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, thread_stop) = (Arc::clone(&self.shared), Arc::clone(&stop));
        let handle = thread::Builder::new()
            .name(name.clone())
            .spawn(move || stream_thread::run(shared, index, thread_stop))
            .map_err(Error::ThreadSpawn)?;
        self.threads.insert(index, StreamThread { handle, stop });
        self.reshare_budget();
        Ok(name)
    }

    /// Shares the uncommitted-bytes budget between the stream threads that run now, as Kafka
    /// Streams resizes its threads' shares when one is added or removed.
    fn reshare_budget(&self) {
        self.shared
            .uncommitted_bytes
            .share_between(self.threads.len());
    }

    /// Stops the oldest running stream thread (the lowest index), which commits and closes its
    /// tasks and leaves the group, and returns its name; `None` when no thread runs. When it
    /// has not ended within `timeout`, it goes on stopping and [`Error::Timeout`] says so.
    pub fn remove_thread(&mut self, timeout: Duration) -> Result<Option<String>> {
        let Some(index) = self.threads.keys().next().copied() else {
            return Ok(None);
        };
        let name = self.thread_name(index);
        let thread = self.threads.remove(&index).expect("listed above");
        self.reshare_budget();
        thread.stop.store(true, Ordering::Relaxed);
        let deadline = Instant::now() + timeout;
        while !thread.handle.is_finished() {
            if Instant::now() >= deadline {
                self.retiring.insert(index, thread);
                return Err(Error::Timeout(format!(
                    "{name} did not stop within {timeout:?}"
                )));
            }
            thread::sleep(STOP_POLL_INTERVAL);
        }
        joined(thread.handle)?;
        Ok(Some(name))
    }

    /// Joins a removed thread that outlived its removal's timeout and has ended since, and
    /// returns its name (`None`: no such thread); the first error such a thread stopped with is
    /// kept for [`close`](Self::close).
    pub fn reap_retired(&mut self) -> Option<String> {
        let index = self
            .retiring
            .iter()
            .find(|(_, thread)| thread.handle.is_finished())
            .map(|(index, _)| *index)?;
        let thread = self.retiring.remove(&index).expect("found above");
        if let Err(error) = joined(thread.handle) {
            self.retired_error.get_or_insert(error);
        }
        Some(self.thread_name(index))
    }

    /// The name of a stream thread that stopped on its own (it failed), if one did.
    pub fn stopped_thread(&self) -> Option<String> {
        self.threads
            .iter()
            .find(|(_, thread)| thread.handle.is_finished())
            .map(|(index, _)| self.thread_name(*index))
    }

    /// Takes the stopped thread `name` out of the engine and returns what it stopped with;
    /// the caller decides whether to replace it ([`add_thread`](Self::add_thread)). Nothing
    /// happens when no thread of that name has stopped.
    pub fn take_stopped_thread(&mut self, name: &str) -> Result<()> {
        let index = self
            .threads
            .iter()
            .find(|(index, thread)| {
                thread.handle.is_finished() && self.thread_name(**index) == name
            })
            .map(|(index, _)| *index);
        let Some(index) = index else {
            return Ok(());
        };
        let thread = self.threads.remove(&index).expect("found above");
        self.replacing = Some(index);
        self.reshare_budget();
        joined(thread.handle)
    }

    /// Pauses (or resumes) processing, as `KafkaStreams.pause` does: the stream threads stop
    /// processing, punctuating and restoring their tasks, current and future, within a turn
    /// of their loop, and pause fetching their inputs; they stay in the group and commit what
    /// was processed before. The global thread goes on.
    pub fn set_paused(&self, paused: bool) {
        self.shared.paused.store(paused, Ordering::Relaxed);
    }

    /// The names of the stream threads that run, by index.
    pub fn thread_names(&self) -> Vec<String> {
        self.threads
            .keys()
            .map(|index| self.thread_name(*index))
            .collect()
    }

    fn thread_name(&self, index: usize) -> String {
        format!("{}-StreamThread-{index}", self.shared.config.application_id)
    }

    /// The instance's counters.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// How far behind the end of each input partition of its running tasks each stream thread
    /// is, and how far behind the end of each changelog partition its restore consumer reads (or
    /// last read, until it reads others), by thread index.
    pub fn consumer_lags(&self) -> ConsumerLags {
        self.metrics.consumer_lags()
    }

    /// True once a thread stopped on its own (it failed; [`take_stopped_thread`] or
    /// [`close`](Self::close) says why).
    ///
    /// [`take_stopped_thread`]: Self::take_stopped_thread
    pub fn has_failed(&self) -> bool {
        self.threads
            .values()
            .map(|thread| &thread.handle)
            .chain(&self.global)
            .any(JoinHandle::is_finished)
    }

    /// Stops every thread (committing and closing their tasks) and returns the first
    /// error a thread stopped with.
    pub fn close(mut self) -> Result<()> {
        let threads: Vec<StreamThread> = std::mem::take(&mut self.threads)
            .into_values()
            .chain(std::mem::take(&mut self.retiring).into_values())
            .collect();
        for thread in &threads {
            thread.stop.store(true, Ordering::Relaxed);
        }
        let mut first_error = self.retired_error.take();
        for thread in threads {
            if let Err(error) = joined(thread.handle) {
                first_error.get_or_insert(error);
            }
        }
        self.global_stop.store(true, Ordering::Relaxed);
        if let Some(handle) = self.global.take() {
            if let Err(error) = joined(handle) {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
