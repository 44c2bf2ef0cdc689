//! The engine's calls into the JVM: the Java `TaskFactory`, its `TaskRunner`s and `GlobalRunner`,
//! and `RestoreProgress`, behind the engine's traits ([`ProcessorFactory`], [`TaskProcessor`],
//! [`GlobalProcessor`], [`RestoreListener`]).
//!
//! Each engine thread attaches itself to the JVM under its own name and asks the factory for a
//! `TaskRunner` per assigned task; from then on every step of a task (restore, process,
//! punctuate, flush, commit, close) is one call into its runner with the records framed as
//! [`record_framing`](super::record_framing) describes. An exception in a runner stops the
//! engine thread, as an uncaught exception stops a Kafka Streams thread. The factory also
//! hears, per engine thread, when a rebalance begins and which tasks the thread owns once it
//! ends: what Kafka Streams' client state follows. A record the engine's producer failed to
//! write goes back to the runner of the task that returned it, with the Kafka protocol error
//! code Java's producer would report. The global stores are kept by a `GlobalRunner` the
//! factory creates on the engine's global thread, which hands it the global topics' records
//! the same way.

use std::collections::BTreeMap;
use std::time::Duration;

use jni::errors::Error as JniCallError;
use jni::objects::{JByteArray, JIntArray, JObject, JObjectArray, JValue};
use jni::refs::Global;
use jni::signature::MethodSignature;
use jni::strings::{JNIStr, JNIString};
use jni::sys::{jint, jlong};
use jni::{jni_sig, jni_str, AttachConfig, Env, JavaVM};

use super::arrays::{new_byte_array, read_bytes, read_chunked};
use super::errors::NativeError;
use super::framing;
use super::record_framing;
use crate::engine::{
    CommittedInput, GlobalProcessor, InputOffset, KeptStateCorrupted, LoopTurn, ProcessorError,
    ProcessorFactory, RestoreListener, TaskId, TaskProcessor,
};
use crate::kafka::{ClientError, DeliveredOffsets, ProducedRecord, ProducedRecords, RecordRun};
use crate::store::TopicPartition;

/// Asks the Java `TaskFactory` for each task's runner.
pub(super) struct JvmProcessorFactory {
    vm: JavaVM,
    factory: Global<JObject<'static>>,
}

impl JvmProcessorFactory {
    pub(super) fn new(vm: JavaVM, factory: Global<JObject<'static>>) -> Self {
        JvmProcessorFactory { vm, factory }
    }
}

impl ProcessorFactory for JvmProcessorFactory {
    fn create(
        &self,
        task: TaskId,
        inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        let inputs = record_framing::inputs(inputs);
        let runner = upcall(&self.vm, |env| {
            let inputs = new_byte_array(env, &inputs)?;
            let runner = env
                .call_method(
                    &*self.factory,
                    jni_str!("create"),
                    jni_sig!("(II[B)Ldev/sluice/streams/runtime/internals/TaskRunner;"),
                    &[
                        JValue::Int(task.subtopology as jint),
                        JValue::Int(task.partition),
                        JValue::Object(&inputs),
                    ],
                )?
                .l()?;
            Ok(env.new_global_ref(&runner)?)
        })?;
        Ok(Box::new(JvmTaskProcessor(JvmRunner {
            vm: self.vm.clone(),
            runner,
        })))
    }

    fn create_standby(&self, task: TaskId) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        let runner = upcall(&self.vm, |env| {
            let runner = env
                .call_method(
                    &*self.factory,
                    jni_str!("createStandby"),
                    jni_sig!("(II)Ldev/sluice/streams/runtime/internals/StateRunner;"),
                    &[
                        JValue::Int(task.subtopology as jint),
                        JValue::Int(task.partition),
                    ],
                )?
                .l()?;
            Ok(env.new_global_ref(&runner)?)
        })?;
        Ok(Box::new(JvmTaskProcessor(JvmRunner {
            vm: self.vm.clone(),
            runner,
        })))
    }

    fn create_global(
        &self,
        log_starts: &BTreeMap<TopicPartition, i64>,
    ) -> Result<Box<dyn GlobalProcessor>, ProcessorError> {
        let log_starts = record_framing::offsets(log_starts.iter().map(|(p, o)| (p, Some(*o))));
        let runner = upcall(&self.vm, |env| {
            let log_starts = new_byte_array(env, &log_starts)?;
            let runner = env
                .call_method(
                    &*self.factory,
                    jni_str!("createGlobal"),
                    jni_sig!("([B)Ldev/sluice/streams/runtime/internals/GlobalRunner;"),
                    &[JValue::Object(&log_starts)],
                )?
                .l()?;
            Ok(env.new_global_ref(&runner)?)
        })?;
        Ok(Box::new(JvmGlobalProcessor(JvmRunner {
            vm: self.vm.clone(),
            runner,
        })))
    }

    fn now_ms(&self) -> Result<i64, ProcessorError> {
        upcall(&self.vm, |env| {
            let now = env.call_method(
                &*self.factory,
                jni_str!("milliseconds"),
                jni_sig!("()J"),
                &[],
            )?;
            Ok(now.j()?)
        })
    }

    fn assignment_started(&self) -> Result<(), ProcessorError> {
        upcall(&self.vm, |env| {
            env.call_method(
                &*self.factory,
                jni_str!("assignmentStarted"),
                jni_sig!("()V"),
                &[],
            )?;
            Ok(())
        })
    }

    fn assigned(&self, tasks: &[TaskId]) -> Result<(), ProcessorError> {
        let subtopologies: Vec<jint> = tasks.iter().map(|t| t.subtopology as jint).collect();
        let partitions: Vec<jint> = tasks.iter().map(|t| t.partition).collect();
        upcall(&self.vm, |env| {
            let subtopologies = new_int_array(env, &subtopologies)?;
            let partitions = new_int_array(env, &partitions)?;
            env.call_method(
                &*self.factory,
                jni_str!("assigned"),
                jni_sig!("([I[I)V"),
                &[JValue::Object(&subtopologies), JValue::Object(&partitions)],
            )?;
            Ok(())
        })
    }

    fn loop_turned(&self, turn: &LoopTurn) -> Result<(), ProcessorError> {
        let nanos = |phase: Duration| JValue::Long(phase.as_nanos().min(i64::MAX as u128) as jlong);
        upcall(&self.vm, |env| {
            env.call_method(
                &*self.factory,
                jni_str!("loopTurned"),
                jni_sig!("(JIJJJJ)V"),
                &[
                    nanos(turn.poll),
                    JValue::Int(turn.polled_records.min(jint::MAX as usize) as jint),
                    nanos(turn.process),
                    nanos(turn.punctuate),
                    nanos(turn.commit),
                    nanos(turn.total),
                ],
            )?;
            Ok(())
        })
    }
}

/// An `int[]` holding `values` (once per rebalance: the `jni` crate's checked calls will do).
fn new_int_array<'local>(
    env: &mut Env<'local>,
    values: &[jint],
) -> Result<JIntArray<'local>, JniCallError> {
    let array = env.new_int_array(values.len())?;
    array.set_region(env, 0, values)?;
    Ok(array)
}

/// A Java runner object the engine calls: a `TaskRunner` or the `GlobalRunner`.
struct JvmRunner {
    vm: JavaVM,
    runner: Global<JObject<'static>>,
}

impl JvmRunner {
    /// Calls `method` with at most one `byte[]` argument and returns the `byte[]` it
    /// returns (nothing for a void method or a null result).
    fn call(
        &self,
        method: &JNIStr,
        sig: &MethodSignature<'_, '_>,
        argument: Option<&[u8]>,
    ) -> Result<Vec<u8>, ProcessorError> {
        upcall(&self.vm, |env| {
            let result = self.invoke(env, method, sig, argument)?;
            if result.is_null() {
                return Ok(Vec::new());
            }
            let array = env.cast_local::<JByteArray>(result)?;
            Ok(read_bytes(env, &array, "result")?)
        })
    }

    /// Calls `method`, which takes no argument and returns the records it produced (see
    /// [`read_produced`]).
    fn call_for_produced(
        &self,
        method: &JNIStr,
        sig: &MethodSignature<'_, '_>,
    ) -> Result<ProducedRecords, ProcessorError> {
        let produced = upcall(&self.vm, |env| {
            let result = self.invoke(env, method, sig, None)?;
            read_produced(env, result)
        })?;
        Ok(record_framing::produced_records(produced)?)
    }

    /// Calls `method` with the consumed `records`, framed, in a direct `ByteBuffer` over the
    /// engine's own bytes, so that a batch costs the JVM neither a copy nor an array; what the
    /// method returns goes to `result`. The buffer is valid for the call only: every runner
    /// decodes the records before it returns.
    fn call_with_records<T>(
        &self,
        method: &JNIStr,
        sig: &MethodSignature<'_, '_>,
        records: &[RecordRun],
        result: impl FnOnce(&mut Env<'_>, JObject<'_>) -> Result<T, UpcallError>,
    ) -> Result<T, ProcessorError> {
        let mut batch = record_framing::consumed_records(records);
        upcall(&self.vm, |env| {
            // SAFETY: `batch` outlives the call and is not touched during it; the runner
            // reads the buffer only while the call runs and keeps no reference to it.
            let buffer = unsafe { env.new_direct_byte_buffer(batch.as_mut_ptr(), batch.len()) }?;
            let returned = env
                .call_method(&*self.runner, method, sig, &[JValue::Object(&buffer)])?
                .l()
                .unwrap_or_default();
            result(env, returned)
        })
    }

    /// Calls `method` with at most one `byte[]` argument; what it returns, null for a void
    /// method.
    fn invoke<'local>(
        &self,
        env: &mut Env<'local>,
        method: &JNIStr,
        sig: &MethodSignature<'_, '_>,
        argument: Option<&[u8]>,
    ) -> Result<JObject<'local>, UpcallError> {
        let argument = argument
            .map(|bytes| new_byte_array(env, bytes))
            .transpose()?;
        let arguments: Vec<JValue<'_>> = argument
            .iter()
            .map(|array| JValue::Object(array.as_ref()))
            .collect();
        let result = env.call_method(&*self.runner, method, sig, &arguments)?;
        Ok(result.l().unwrap_or_default())
    }

    /// Calls the runner's `close(boolean)`.
    fn close(&self, clean: bool) -> Result<(), ProcessorError> {
        upcall(&self.vm, |env| {
            let clean = JValue::Bool(clean);
            env.call_method(&*self.runner, jni_str!("close"), jni_sig!("(Z)V"), &[clean])?;
            Ok(())
        })
    }

    /// The runner's `uncommittedBytes()`.
    fn uncommitted_bytes(&self) -> u64 {
        let bytes = upcall(&self.vm, |env| {
            Ok(env
                .call_method(
                    &*self.runner,
                    jni_str!("uncommittedBytes"),
                    jni_sig!("()J"),
                    &[],
                )?
                .j()?)
        });
        // The budget is advisory: a runner that cannot say counts as holding nothing.
        bytes.map_or(0, |b| b.max(0) as u64)
    }
}

/// A task run by a Java `TaskRunner`, which keeps the task's stores; or a standby replica
/// kept by a Java `StateRunner`, which has the methods the engine calls on a standby replica
/// (those of its stores).
struct JvmTaskProcessor(JvmRunner);

impl TaskProcessor for JvmTaskProcessor {
    fn process(&mut self, records: &[RecordRun]) -> Result<ProducedRecords, ProcessorError> {
        let sig = jni_sig!("(Ljava/nio/ByteBuffer;)[[B");
        let produced =
            self.0
                .call_with_records(jni_str!("process"), &sig, records, read_produced)?;
        Ok(record_framing::produced_records(produced)?)
    }

    fn committed_changelog_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        let sig = jni_sig!("()[B");
        let bytes = self
            .0
            .call(jni_str!("committedChangelogOffsets"), &sig, None)?;
        Ok(framing::offsets(&bytes)?)
    }

    fn wipe_state(&mut self) -> Result<(), ProcessorError> {
        self.0.call(jni_str!("wipeState"), &jni_sig!("()V"), None)?;
        Ok(())
    }

    fn restore(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        let sig = jni_sig!("(Ljava/nio/ByteBuffer;)V");
        self.0
            .call_with_records(jni_str!("restore"), &sig, records, |_, _| Ok(()))
    }

    fn restored(&mut self) -> Result<(), ProcessorError> {
        self.0.call(jni_str!("restored"), &jni_sig!("()V"), None)?;
        Ok(())
    }

    fn update_lags(
        &mut self,
        lags: &[(TopicPartition, Option<i64>)],
    ) -> Result<(), ProcessorError> {
        let framed = record_framing::offsets(lags.iter().map(|(p, lag)| (p, *lag)));
        self.0
            .call(jni_str!("updateLags"), &jni_sig!("([B)V"), Some(&framed))?;
        Ok(())
    }

    fn full_inputs(&mut self) -> Result<Vec<TopicPartition>, ProcessorError> {
        let bytes = self
            .0
            .call(jni_str!("fullInputs"), &jni_sig!("()[B"), None)?;
        Ok(framing::offsets(&bytes)?.into_keys().collect())
    }

    fn commit_requested(&mut self) -> Result<bool, ProcessorError> {
        let runner = &self.0;
        upcall(&runner.vm, |env| {
            Ok(env
                .call_method(
                    &*runner.runner,
                    jni_str!("commitRequested"),
                    jni_sig!("()Z"),
                    &[],
                )?
                .z()?)
        })
    }

    fn punctuate(&mut self) -> Result<ProducedRecords, ProcessorError> {
        let sig = jni_sig!("()[[B");
        self.0.call_for_produced(jni_str!("punctuate"), &sig)
    }

    fn produced_before_failure(&mut self) -> Result<ProducedRecords, ProcessorError> {
        let sig = jni_sig!("()[[B");
        self.0
            .call_for_produced(jni_str!("producedBeforeFailure"), &sig)
    }

    fn flush(&mut self) -> Result<ProducedRecords, ProcessorError> {
        let sig = jni_sig!("()[[B");
        self.0.call_for_produced(jni_str!("flush"), &sig)
    }

    fn committable_offsets(
        &mut self,
    ) -> Result<Option<BTreeMap<TopicPartition, InputOffset>>, ProcessorError> {
        let bytes = self
            .0
            .call(jni_str!("committableOffsets"), &jni_sig!("()[B"), None)?;
        Ok(Some(record_framing::positions(&bytes)?))
    }

    fn send_failed(
        &mut self,
        index: u64,
        record: &ProducedRecord,
        error: &ClientError,
    ) -> Result<ProducedRecords, ProcessorError> {
        let framed = record_framing::produced_record(record);
        let produced = upcall(&self.0.vm, |env| {
            let record = new_byte_array(env, &framed)?;
            let message = env.new_string(error.to_string())?;
            let result = env
                .call_method(
                    &*self.0.runner,
                    jni_str!("sendFailed"),
                    jni_sig!("(J[BILjava/lang/String;)[[B"),
                    &[
                        JValue::Long(index as jlong),
                        JValue::Object(&record),
                        JValue::Int(jint::from(error.protocol_code())),
                        JValue::Object(&message),
                    ],
                )?
                .l()?;
            read_produced(env, result)
        })?;
        Ok(record_framing::produced_records(produced)?)
    }

    fn sends_answered(&mut self, below: u64) -> Result<(), ProcessorError> {
        upcall(&self.0.vm, |env| {
            let below = JValue::Long(below as jlong);
            env.call_method(
                &*self.0.runner,
                jni_str!("sendsAnswered"),
                jni_sig!("(J)V"),
                &[below],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    fn committed(&mut self, delivered: &DeliveredOffsets) -> Result<(), ProcessorError> {
        let offsets = record_framing::offsets(delivered.iter().map(|(p, o)| (p, Some(*o))));
        self.0
            .call(jni_str!("committed"), &jni_sig!("([B)V"), Some(&offsets))?;
        Ok(())
    }

    fn rolled_back(&mut self, cause: &str) -> Result<(), ProcessorError> {
        upcall(&self.0.vm, |env| {
            let cause = env.new_string(cause)?;
            env.call_method(
                &*self.0.runner,
                jni_str!("rolledBack"),
                jni_sig!("(Ljava/lang/String;)V"),
                &[JValue::Object(&cause)],
            )?;
            Ok(())
        })?;
        Ok(())
    }

    /// Calls the replica runner's `promote(byte[])` (a `StandbyTaskRunner`'s).
    fn promote(
        self: Box<Self>,
        inputs: &[CommittedInput],
    ) -> Result<Box<dyn TaskProcessor>, ProcessorError> {
        let inputs = record_framing::inputs(inputs);
        let JvmRunner { vm, runner } = self.0;
        let task = upcall(&vm, |env| {
            let inputs = new_byte_array(env, &inputs)?;
            let task = env
                .call_method(
                    &*runner,
                    jni_str!("promote"),
                    jni_sig!("([B)Ldev/sluice/streams/runtime/internals/TaskRunner;"),
                    &[JValue::Object(&inputs)],
                )?
                .l()?;
            Ok(env.new_global_ref(&task)?)
        })?;
        Ok(Box::new(JvmTaskProcessor(JvmRunner { vm, runner: task })))
    }

    fn close(&mut self, clean: bool) -> Result<(), ProcessorError> {
        self.0.close(clean)
    }

    fn uncommitted_bytes(&self) -> u64 {
        self.0.uncommitted_bytes()
    }
}

/// The global stores kept by the Java `GlobalRunner`.
struct JvmGlobalProcessor(JvmRunner);

impl GlobalProcessor for JvmGlobalProcessor {
    fn committed_offsets(
        &mut self,
    ) -> Result<BTreeMap<TopicPartition, Option<i64>>, ProcessorError> {
        let bytes = self
            .0
            .call(jni_str!("committedOffsets"), &jni_sig!("()[B"), None)?;
        Ok(framing::offsets(&bytes)?)
    }

    fn wipe_state(&mut self) -> Result<(), ProcessorError> {
        self.0.call(jni_str!("wipeState"), &jni_sig!("()V"), None)?;
        Ok(())
    }

    fn restore(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        let sig = jni_sig!("(Ljava/nio/ByteBuffer;)V");
        self.0
            .call_with_records(jni_str!("restore"), &sig, records, |_, _| Ok(()))
    }

    fn process(&mut self, records: &[RecordRun]) -> Result<(), ProcessorError> {
        let sig = jni_sig!("(Ljava/nio/ByteBuffer;)V");
        self.0
            .call_with_records(jni_str!("process"), &sig, records, |_, _| Ok(()))
    }

    fn commit(&mut self) -> Result<(), ProcessorError> {
        self.0.call(jni_str!("commit"), &jni_sig!("()V"), None)?;
        Ok(())
    }

    fn close(&mut self, clean: bool) -> Result<(), ProcessorError> {
        self.0.close(clean)
    }

    fn uncommitted_bytes(&self) -> u64 {
        self.0.uncommitted_bytes()
    }
}

/// Reports restoration to a Java `RestoreProgress`, which never throws (it guards the
/// listeners it calls), so a failed call can only be a JVM in trouble: it is dropped, as
/// progress reports are not the restore's business.
pub(super) struct JvmRestoreListener {
    vm: JavaVM,
    progress: Global<JObject<'static>>,
}

impl JvmRestoreListener {
    pub(super) fn new(vm: JavaVM, progress: Global<JObject<'static>>) -> Self {
        JvmRestoreListener { vm, progress }
    }

    /// Calls `method(store, topic, partition, numbers...)`, whose signature is `sig`.
    fn report(
        &self,
        method: &JNIStr,
        sig: &MethodSignature<'_, '_>,
        store: &str,
        partition: &TopicPartition,
        numbers: &[i64],
    ) {
        let _ = upcall(&self.vm, |env| {
            let store = env.new_string(store)?;
            let topic = env.new_string(&partition.topic)?;
            let mut arguments = vec![
                JValue::Object(&store),
                JValue::Object(&topic),
                JValue::Int(partition.partition),
            ];
            arguments.extend(numbers.iter().map(|&n| JValue::Long(n)));
            env.call_method(&*self.progress, method, sig, &arguments)?;
            Ok(())
        });
    }
}

impl RestoreListener for JvmRestoreListener {
    fn on_restore_start(&self, store: &str, partition: &TopicPartition, start: i64, end: i64) {
        let sig = jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJJ)V");
        self.report(
            jni_str!("restoreStarted"),
            &sig,
            store,
            partition,
            &[start, end],
        );
    }

    fn on_batch_restored(
        &self,
        store: &str,
        partition: &TopicPartition,
        restored: u64,
        remaining: u64,
    ) {
        let sig = jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJJ)V");
        let numbers = [restored as i64, remaining as i64];
        self.report(jni_str!("batchRestored"), &sig, store, partition, &numbers);
    }

    fn on_restore_end(&self, store: &str, partition: &TopicPartition, restored: u64) {
        let sig = jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJ)V");
        self.report(
            jni_str!("restoreEnded"),
            &sig,
            store,
            partition,
            &[restored as i64],
        );
    }

    fn on_restore_suspended(&self, store: &str, partition: &TopicPartition, restored: u64) {
        let sig = jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJ)V");
        self.report(
            jni_str!("restoreSuspended"),
            &sig,
            store,
            partition,
            &[restored as i64],
        );
    }

    fn on_standby_update_start(
        &self,
        store: &str,
        partition: &TopicPartition,
        start_offset: i64,
        end_offset: i64,
    ) {
        let sig = jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJJ)V");
        let numbers = [start_offset, end_offset];
        self.report(
            jni_str!("standbyUpdateStarted"),
            &sig,
            store,
            partition,
            &numbers,
        );
    }

    fn on_standby_batch_loaded(
        &self,
        store: &str,
        partition: &TopicPartition,
        task: TaskId,
        batch_end_offset: i64,
        batch_size: u64,
        current_end_offset: i64,
    ) {
        let sig = jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJJJJ)V");
        let numbers = [
            i64::from(task.subtopology),
            batch_end_offset,
            batch_size as i64,
            current_end_offset,
        ];
        self.report(
            jni_str!("standbyBatchLoaded"),
            &sig,
            store,
            partition,
            &numbers,
        );
    }

    fn on_standby_update_suspended(
        &self,
        store: &str,
        partition: &TopicPartition,
        store_offset: i64,
        current_end_offset: i64,
        promoted: bool,
    ) {
        let sig = jni_sig!("(Ljava/lang/String;Ljava/lang/String;IJJJ)V");
        let numbers = [store_offset, current_end_offset, i64::from(promoted)];
        self.report(
            jni_str!("standbyUpdateSuspended"),
            &sig,
            store,
            partition,
            &numbers,
        );
    }
}

/// An exception a Java task runner threw.
#[derive(Debug)]
struct JavaFailure(String);

impl std::fmt::Display for JavaFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JavaFailure {}

/// What a call into Java fails with inside [`upcall`].
pub(super) enum UpcallError {
    Jni(JniCallError),
    Native(NativeError),
}

impl From<JniCallError> for UpcallError {
    fn from(error: JniCallError) -> Self {
        UpcallError::Jni(error)
    }
}

impl From<NativeError> for UpcallError {
    fn from(error: NativeError) -> Self {
        UpcallError::Native(error)
    }
}

/// What a runner throws when the state its task keeps is corrupt.
const TASK_CORRUPTED: &str = "org.apache.kafka.streams.errors.TaskCorruptedException";

/// The produced records in the arrays a runner returned, which it reuses (the runner's
/// `RuntimeFraming.ProducedRecords#drain`).
fn read_produced(env: &mut Env<'_>, returned: JObject<'_>) -> Result<Vec<u8>, UpcallError> {
    let chunks = env.cast_local::<JObjectArray<JByteArray>>(returned)?;
    Ok(read_chunked(env, &chunks, "produced records")?)
}

/// Runs `call` on this thread attached to the JVM (under the thread's own name, and for
/// good: engine threads call Java all the time). A Java exception is cleared and returned
/// as the processor's error, naming its class and message; Kafka Streams'
/// `TaskCorruptedException` becomes [`KeptStateCorrupted`].
pub(super) fn upcall<T>(
    vm: &JavaVM,
    call: impl FnOnce(&mut Env<'_>) -> Result<T, UpcallError>,
) -> Result<T, ProcessorError> {
    let name = std::thread::current()
        .name()
        .map(JNIString::from)
        .unwrap_or_else(|| JNIString::from("sluice-engine"));
    let attached = vm.attach_current_thread_with_config(
        || AttachConfig::default().thread_name(&name),
        Some(16),
        call,
    );
    attached.map_err(|error| -> ProcessorError {
        match error {
            UpcallError::Jni(JniCallError::CaughtJavaException { name, msg, .. })
                if name.replace('/', ".") == TASK_CORRUPTED =>
            {
                Box::new(KeptStateCorrupted(msg))
            }
            UpcallError::Jni(JniCallError::CaughtJavaException { name, msg, .. }) => {
                Box::new(JavaFailure(format!("{name}: {msg}")))
            }
            UpcallError::Jni(other) => Box::new(JavaFailure(format!("call into Java: {other}"))),
            UpcallError::Native(error) => Box::new(error),
        }
    })
}
