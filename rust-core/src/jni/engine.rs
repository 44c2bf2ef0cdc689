//! `dev.sluice.streams.runtime.internals.NativeEngine`: the engine, running tasks whose code
//! is on the JVM. These are the calls Java makes into the engine (start, close, pause, add and
//! remove threads); the engine's calls back into Java, the task runners and the restore
//! progress, are [`upcalls`](super::upcalls).
//!
//! Java starts an engine with a topology (JSON, [`TopologyDescription`]), its properties, a
//! `TaskFactory` and an optional `RestoreProgress`. Processing can be paused and resumed, from
//! the start on.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString};
use jni::sys::{jboolean, jlong};
use jni::{Env, EnvUnowned};
use once_cell::sync::Lazy;

use super::arrays::{new_byte_array, new_string_array, read_bytes};
use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::group_member::JvmGroupMembership;
use super::handles::HandleTable;
use super::record_framing;
use super::upcalls::{JvmProcessorFactory, JvmRestoreListener};
use crate::engine::{
    Engine, EngineConfig, Error as EngineError, RestoreListener, TopologyDescription,
};

/// Running engines. `close` takes the engine out, so a second close finds nothing.
static ENGINES: Lazy<HandleTable<Mutex<Option<Engine>>>> = Lazy::new(|| HandleTable::new("engine"));

/// Starts an engine, its processing paused when `paused`; returns its handle.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_start<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    topology: JByteArray<'local>,
    properties: JByteArray<'local>,
    factory: JObject<'local>,
    restore_progress: JObject<'local>,
    paused: jboolean,
) -> jlong {
    env.with_env(|env| -> Result<jlong, NativeError> {
        let topology = read_topology(env, &topology)?;
        let properties = record_framing::properties(&read_bytes(env, &properties, "config")?)?;
        let config = EngineConfig::from_properties(&properties).map_err(engine_error)?;
        if factory.is_null() {
            return Err(NativeError::new(
                JavaException::NullPointer,
                "task factory cannot be null",
            ));
        }
        let vm = env.get_java_vm()?;
        let restore_listener: Option<Arc<dyn RestoreListener>> = if restore_progress.is_null() {
            None
        } else {
            Some(Arc::new(JvmRestoreListener::new(
                vm.clone(),
                env.new_global_ref(&restore_progress)?,
            )))
        };
        let membership = JvmGroupMembership::new(
            vm.clone(),
            env.new_global_ref(&factory)?,
            config.application_id.clone(),
        );
        let factory = JvmProcessorFactory::new(vm, env.new_global_ref(&factory)?);
        let engine = Engine::start(
            config,
            &topology,
            Arc::new(factory),
            Arc::new(membership),
            restore_listener,
            paused,
        )
        .map_err(engine_error)?;
        Ok(ENGINES.insert(Arc::new(Mutex::new(Some(engine)))))
    })
    .resolve::<ThrowJavaException>()
}

/// Checks an application config as the engine would start with it, client settings included;
/// raises `ConfigException` naming the bad key. Returns, framed as properties, the client
/// settings the engine's clients take as another value.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_checkConfig<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    properties: JByteArray<'local>,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let properties = record_framing::properties(&read_bytes(env, &properties, "config")?)?;
        let config = EngineConfig::from_properties(&properties).map_err(engine_error)?;
        let adjusted = config.check_client_settings().map_err(engine_error)?;
        new_byte_array(env, &record_framing::encoded_properties(&adjusted))
    })
    .resolve::<ThrowJavaException>()
}

/// Stops the engine: its threads commit and close their tasks. Raises the first error a
/// thread stopped with. Closing twice is a no-op.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_close<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        let Some(engine) = ENGINES.remove(handle) else {
            return Ok(());
        };
        let engine = engine.lock().unwrap_or_else(|p| p.into_inner()).take();
        match engine {
            Some(engine) => engine.close().map_err(engine_error),
            None => Ok(()),
        }
    })
    .resolve::<ThrowJavaException>()
}

/// True once an engine thread stopped on its own.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_hasFailed<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> jboolean {
    env.with_env(|_env| -> Result<jboolean, NativeError> {
        let engine = ENGINES.get(handle)?;
        let engine = engine.lock().unwrap_or_else(|p| p.into_inner());
        Ok(engine.as_ref().is_some_and(Engine::has_failed))
    })
    .resolve::<ThrowJavaException>()
}

/// Runs the engine on `topology` (its JSON description) from now on: the topics its patterns
/// match changed.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_updateTopology<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    topology: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let topology = read_topology(env, &topology)?;
        with_engine(handle, |engine| engine.update_topology(&topology))
    })
    .resolve::<ThrowJavaException>()
}

/// Pauses (`paused`) or resumes processing.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_setPaused<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    paused: jboolean,
) {
    env.with_env(|_env| -> Result<(), NativeError> {
        with_engine(handle, |engine| {
            engine.set_paused(paused);
            Ok(())
        })
    })
    .resolve::<ThrowJavaException>()
}

/// Starts one more engine thread; returns its name.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_addThread<'local>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, NativeError> {
        let name = with_engine(handle, Engine::add_thread)?;
        Ok(env.new_string(name)?)
    })
    .resolve::<ThrowJavaException>()
}

/// The names of the engine threads that run, oldest first.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_threadNames<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JObjectArray<'local, JString<'local>> {
    env.with_env(
        |env| -> Result<JObjectArray<'local, JString<'local>>, NativeError> {
            let names = with_engine(handle, |engine| Ok(engine.thread_names()))?;
            new_string_array(env, names.into_iter())
        },
    )
    .resolve::<ThrowJavaException>()
}

/// Stops the oldest engine thread, waiting up to `timeout_ms`; returns its name, or null when
/// no thread runs.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_removeThread<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    timeout_ms: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, NativeError> {
        let timeout = Duration::from_millis(u64::try_from(timeout_ms).unwrap_or(0));
        let removed = with_engine(handle, |engine| engine.remove_thread(timeout))?;
        java_string_or_null(env, removed)
    })
    .resolve::<ThrowJavaException>()
}

/// The name of an engine thread that stopped on its own, or null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_stoppedThread<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, NativeError> {
        let stopped = with_engine(handle, |engine| Ok(engine.stopped_thread()))?;
        java_string_or_null(env, stopped)
    })
    .resolve::<ThrowJavaException>()
}

/// The name of a removed engine thread that ended after its removal timed out, now joined, or null.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_reapRetiredThread<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JString<'local> {
    env.with_env(|env| -> Result<JString<'local>, NativeError> {
        let reaped = with_engine(handle, |engine| Ok(engine.reap_retired()))?;
        java_string_or_null(env, reaped)
    })
    .resolve::<ThrowJavaException>()
}

/// How far behind the end of each partition its consumers read each stream thread is: its
/// main consumer's input partitions and its restore consumer's changelog partitions, framed as
/// consumer lags.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_consumerLags<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
) -> JByteArray<'local> {
    env.with_env(|env| -> Result<JByteArray<'local>, NativeError> {
        let lags = with_engine(handle, |engine| Ok(engine.consumer_lags()))?;
        new_byte_array(env, &record_framing::consumer_lags(&lags))
    })
    .resolve::<ThrowJavaException>()
}

/// Takes the stopped engine thread `name` out of the engine; raises the error it stopped with.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_NativeEngine_takeStoppedThread<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    handle: jlong,
    name: JString<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let name = name.try_to_string(env)?;
        with_engine(handle, |engine| engine.take_stopped_thread(&name))
    })
    .resolve::<ThrowJavaException>()
}

/// `text` as a Java string, `None` as null.
fn java_string_or_null<'local>(
    env: &mut Env<'local>,
    text: Option<String>,
) -> Result<JString<'local>, NativeError> {
    match text {
        Some(text) => Ok(env.new_string(text)?),
        None => Ok(JString::null()),
    }
}

fn read_topology(env: &Env<'_>, json: &JByteArray<'_>) -> Result<TopologyDescription, NativeError> {
    serde_json::from_slice(&read_bytes(env, json, "topology")?)
        .map_err(|e| NativeError::new(JavaException::IllegalArgument, format!("topology: {e}")))
}

/// Runs `operation` on the engine behind `handle`; a closed engine is an illegal state.
fn with_engine<T>(
    handle: jlong,
    operation: impl FnOnce(&mut Engine) -> Result<T, EngineError>,
) -> Result<T, NativeError> {
    let engine = ENGINES.get(handle)?;
    let mut engine = engine.lock().unwrap_or_else(|p| p.into_inner());
    match engine.as_mut() {
        Some(engine) => operation(engine).map_err(engine_error),
        None => Err(NativeError::new(
            JavaException::Streams,
            "the engine is closed",
        )),
    }
}

fn engine_error(error: EngineError) -> NativeError {
    let exception = match error {
        EngineError::Config { .. } => JavaException::Config,
        EngineError::Timeout(_) => JavaException::Timeout,
        EngineError::MissingSourceTopics(_) => JavaException::MissingSourceTopic,
        EngineError::Topology(_) => JavaException::Topology,
        _ => JavaException::Streams,
    };
    NativeError::new(exception, error.to_string())
}
