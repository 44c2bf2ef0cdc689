//! An engine instance: resolves the topology, creates internal topics, and runs
//! `num.stream.threads` threads until closed or until one fails.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use crate::engine::config::EngineConfig;
use crate::engine::error::{Error, Result};
use crate::engine::internal_topics;
use crate::engine::metrics::{EngineMetrics, MetricsSnapshot};
use crate::engine::process_id;
use crate::engine::processor::ProcessorFactory;
use crate::engine::restore::RestoreListener;
use crate::engine::thread::{self as stream_thread, ThreadShared};
use crate::engine::topology::TopologyDescription;
use crate::kafka::Admin;
use crate::store::rocks::RocksDbResources;

/// A running engine instance.
pub struct Engine {
    threads: Vec<JoinHandle<Result<()>>>,
    stop: Arc<AtomicBool>,
    metrics: Arc<EngineMetrics>,
}

impl Engine {
    /// Prepares the internal topics of `topology` and starts the threads. Tasks are
    /// created by `factory` as partitions are assigned; `restore_listener` hears about
    /// restoration.
    pub fn start(
        config: EngineConfig,
        topology: &TopologyDescription,
        factory: Arc<dyn ProcessorFactory>,
        restore_listener: Option<Arc<dyn RestoreListener>>,
    ) -> Result<Engine> {
        let admin = Admin::new(&config.admin_config(), config.client_timeout)?;
        let resolved = internal_topics::prepare(
            &config.application_id,
            topology,
            &admin,
            config.replication_factor,
        )?;
        drop(admin);
        let process_id =
            process_id::load_or_create(&config.application_dir()).map_err(Error::StateDirectory)?;
        let stop = Arc::new(AtomicBool::new(false));
        let metrics = Arc::new(EngineMetrics::default());
        let shared = Arc::new(ThreadShared {
            resources: RocksDbResources::new(&config.rocksdb),
            config: Arc::new(config),
            topology: Arc::new(resolved),
            factory,
            restore_listener,
            metrics: Arc::clone(&metrics),
            process_id,
            stop: Arc::clone(&stop),
        });
        let mut threads = Vec::new();
        for index in 1..=shared.config.num_stream_threads {
            let shared = Arc::clone(&shared);
            let name = format!("{}-StreamThread-{index}", shared.config.application_id);
            let spawned = thread::Builder::new()
                .name(name)
                .spawn(move || stream_thread::run(shared, index));
            match spawned {
                Ok(handle) => threads.push(handle),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    for handle in threads {
                        let _ = handle.join();
                    }
                    return Err(Error::StateDirectory(e));
                }
            }
        }
        Ok(Engine {
            threads,
            stop,
            metrics,
        })
    }

    /// The instance's counters.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.metrics.snapshot()
    }

    /// True once a thread stopped on its own (it failed; [`close`](Self::close) says why).
    pub fn has_failed(&self) -> bool {
        self.threads.iter().any(JoinHandle::is_finished)
    }

    /// Stops every thread (committing and closing their tasks) and returns the first
    /// error a thread stopped with.
    pub fn close(self) -> Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        let mut first_error = None;
        for handle in self.threads {
            let outcome = handle.join().unwrap_or_else(|panic| {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown panic".into());
                Err(Error::Topology(format!(
                    "engine thread panicked: {message}"
                )))
            });
            if let Err(error) = outcome {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
