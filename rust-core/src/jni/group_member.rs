//! Each engine thread's member of the application's group, on the JVM: Kafka Streams' own
//! membership (Kafka's consumer with Kafka Streams' partition assignor), behind the engine's
//! [`GroupMember`]. `dev.sluice.streams.runtime.internals.EngineGroupMember` is the Java side;
//! the engine thread calls it (poll, commit, group metadata), and its rebalance callbacks come
//! back here, on the same thread inside its poll, through the two native methods below, which
//! run the engine's [`RebalanceListener`].
//!
//! Java holds the address of the [`JavaMember`] the callbacks are for; the member lives in an
//! `Arc` that the engine's [`JvmGroupMember`] owns, which closes the Java member (leaving the
//! group, whose revocation comes back here one last time) before it lets go of it.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use jni::objects::{JByteArray, JClass, JObject, JObjectArray, JString, JValue};
use jni::refs::Global;
use jni::sys::{jboolean, jint, jlong};
use jni::{jni_sig, jni_str, EnvUnowned, JavaVM};

use super::arrays::{new_byte_array, new_string_array, read_bytes};
use super::errors::{JavaException, NativeError, ThrowJavaException};
use super::framing;
use super::record_framing;
use super::upcalls::upcall;
use crate::engine::CommittedInput;
use crate::kafka::{
    ClientError, GroupMember, GroupMembership, GroupMetadata, InputOffset, KafkaFailure,
    RebalanceListener,
};
use crate::store::TopicPartition;

/// Asks the Java `TaskFactory` for each engine thread's member.
pub(super) struct JvmGroupMembership {
    vm: JavaVM,
    factory: Global<JObject<'static>>,
    group_id: String,
}

impl JvmGroupMembership {
    pub(super) fn new(vm: JavaVM, factory: Global<JObject<'static>>, group_id: String) -> Self {
        JvmGroupMembership {
            vm,
            factory,
            group_id,
        }
    }
}

impl GroupMembership for JvmGroupMembership {
    fn join(
        &self,
        thread: usize,
        listener: Arc<dyn RebalanceListener>,
        topics: &[String],
    ) -> Result<Box<dyn GroupMember>, KafkaFailure> {
        let member = Arc::new(JavaMember {
            vm: self.vm.clone(),
            java: OnceLock::new(),
            listener,
            group_id: self.group_id.clone(),
        });
        let address = Arc::as_ptr(&member) as jlong;
        let java = upcall(&self.vm, |env| {
            let topics = new_string_array(env, topics.iter().cloned())?;
            let java = env
                .call_method(
                    &*self.factory,
                    jni_str!("joinGroup"),
                    jni_sig!("(I[Ljava/lang/String;J)Ldev/sluice/streams/runtime/internals/EngineGroupMember;"),
                    &[
                        JValue::Int(thread as jint),
                        JValue::Object(&topics),
                        JValue::Long(address),
                    ],
                )?
                .l()?;
            Ok(env.new_global_ref(&java)?)
        })
        .map_err(|error| java_failure("joining the group", error))?;
        let _ = member.java.set(java);
        Ok(Box::new(JvmGroupMember(member)))
    }
}

/// The engine's handle on a Java member: closes it when dropped.
struct JvmGroupMember(Arc<JavaMember>);

impl Drop for JvmGroupMember {
    fn drop(&mut self) {
        // Leaving the group revokes what the member holds, through the callbacks below, which
        // must find the member alive: it is closed before the `Arc` goes. The Java member logs a
        // close that fails; the thread is ending either way.
        let _ = self
            .0
            .call_void(jni_str!("close"), "closing the group member");
    }
}

impl GroupMember for JvmGroupMember {
    fn poll(&self) -> Result<(), KafkaFailure> {
        self.0.poll()
    }

    fn rejoin(&self) -> Result<(), KafkaFailure> {
        self.0.rejoin()
    }

    fn resubscribe(&self, topics: &[String]) -> Result<(), KafkaFailure> {
        self.0.resubscribe(topics)
    }

    fn commit_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
    ) -> Result<(), KafkaFailure> {
        self.0.commit_offsets(consumed)
    }

    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
        self.0.committed_offsets(partitions)
    }

    fn group_metadata(&self) -> Option<GroupMetadata> {
        self.0.group_metadata()
    }

    fn rebalance_in_progress(&self) -> bool {
        self.0.rebalance_in_progress()
    }

    fn fatal_error(&self) -> Option<ClientError> {
        self.0.fatal_error()
    }
}

/// One Java `EngineGroupMember` and the listener its rebalances go to.
struct JavaMember {
    vm: JavaVM,
    /// Set once the Java member exists, before the engine gets this one.
    java: OnceLock<Global<JObject<'static>>>,
    listener: Arc<dyn RebalanceListener>,
    group_id: String,
}

impl JavaMember {
    fn java(&self) -> &JObject<'static> {
        self.java
            .get()
            .expect("the Java member is made before it is used")
    }

    fn call_void(
        &self,
        method: &'static jni::strings::JNIStr,
        context: &str,
    ) -> Result<(), KafkaFailure> {
        upcall(&self.vm, |env| {
            env.call_method(self.java(), method, jni_sig!("()V"), &[])?;
            Ok(())
        })
        .map_err(|error| java_failure(context, error))
    }
}

impl GroupMember for JavaMember {
    fn poll(&self) -> Result<(), KafkaFailure> {
        self.call_void(jni_str!("poll"), "polling the group")
    }

    fn rejoin(&self) -> Result<(), KafkaFailure> {
        self.call_void(jni_str!("rejoin"), "rejoining the group")
    }

    fn resubscribe(&self, topics: &[String]) -> Result<(), KafkaFailure> {
        upcall(&self.vm, |env| {
            let topics = new_string_array(env, topics.iter().cloned())?;
            env.call_method(
                self.java(),
                jni_str!("subscribe"),
                jni_sig!("([Ljava/lang/String;)V"),
                &[JValue::Object(&topics)],
            )?;
            Ok(())
        })
        .map_err(|error| java_failure(format!("subscribing to {topics:?}"), error))
    }

    fn commit_offsets(
        &self,
        consumed: &BTreeMap<TopicPartition, InputOffset>,
    ) -> Result<(), KafkaFailure> {
        let positions: Vec<CommittedInput> = consumed
            .iter()
            .map(|(partition, position)| CommittedInput {
                partition: partition.clone(),
                committed: Some(position.clone()),
            })
            .collect();
        let framed = record_framing::inputs(&positions);
        upcall(&self.vm, |env| {
            let offsets = new_byte_array(env, &framed)?;
            env.call_method(
                self.java(),
                jni_str!("commit"),
                jni_sig!("([B)V"),
                &[JValue::Object(&offsets)],
            )?;
            Ok(())
        })
        .map_err(|error| java_failure("committing consumed offsets", error))
    }

    fn committed_offsets(
        &self,
        partitions: &[TopicPartition],
    ) -> Result<Vec<(TopicPartition, Option<InputOffset>)>, KafkaFailure> {
        let asked: Vec<CommittedInput> = partitions
            .iter()
            .map(|partition| CommittedInput {
                partition: partition.clone(),
                committed: None,
            })
            .collect();
        let framed = record_framing::inputs(&asked);
        let context = "reading committed offsets";
        let answer = upcall(&self.vm, |env| {
            let asked = new_byte_array(env, &framed)?;
            let answer = env
                .call_method(
                    self.java(),
                    jni_str!("committed"),
                    jni_sig!("([B)[B"),
                    &[JValue::Object(&asked)],
                )?
                .l()?;
            if answer.is_null() {
                return Ok(None);
            }
            let answer = env.cast_local::<JByteArray>(answer)?;
            Ok(Some(record_framing::read_inputs(&read_bytes(
                env, &answer, "offsets",
            )?)?))
        })
        .map_err(|error| java_failure(context, error))?;
        let Some(committed) = answer else {
            return Err(KafkaFailure::new(
                context,
                ClientError::new(
                    ClientError::REQUEST_TIMED_OUT,
                    "the group coordinator did not answer within default.api.timeout.ms",
                ),
            ));
        };
        Ok(committed
            .into_iter()
            .map(|input| (input.partition, input.committed))
            .collect())
    }

    fn group_metadata(&self) -> Option<GroupMetadata> {
        let fields = upcall(&self.vm, |env| {
            let returned = env
                .call_method(
                    self.java(),
                    jni_str!("groupMetadata"),
                    jni_sig!("()[Ljava/lang/String;"),
                    &[],
                )?
                .l()?;
            if returned.is_null() {
                return Ok(None);
            }
            let array = env.cast_local::<JObjectArray<JString>>(returned)?;
            let mut fields = Vec::with_capacity(3);
            for i in 0..3 {
                let field = array.get_element(env, i)?;
                fields.push(if field.is_null() {
                    None
                } else {
                    Some(field.try_to_string(env)?)
                });
            }
            Ok(Some(fields))
        })
        .ok()??;
        let [member_id, generation, instance_id]: [Option<String>; 3] = fields.try_into().ok()?;
        Some(GroupMetadata {
            group_id: self.group_id.clone(),
            member_id: member_id?,
            generation: generation?.parse().ok()?,
            instance_id,
        })
    }

    fn rebalance_in_progress(&self) -> bool {
        upcall(&self.vm, |env| {
            Ok(env
                .call_method(
                    self.java(),
                    jni_str!("rebalanceInProgress"),
                    jni_sig!("()Z"),
                    &[],
                )?
                .z()?)
        })
        .unwrap_or(false)
    }

    fn fatal_error(&self) -> Option<ClientError> {
        let fenced = upcall(&self.vm, |env| {
            Ok(env
                .call_method(self.java(), jni_str!("fenced"), jni_sig!("()Z"), &[])?
                .z()?)
        })
        .unwrap_or(false);
        fenced.then(|| {
            ClientError::new(
                ClientError::FENCED_INSTANCE_ID,
                "the member's group.instance.id was fenced by another member with that id",
            )
        })
    }
}

/// A failed call into the member, as the engine's clients fail.
fn java_failure(
    context: impl Into<String>,
    error: Box<dyn std::error::Error + Send + Sync>,
) -> KafkaFailure {
    KafkaFailure::new(
        context,
        ClientError::new(ClientError::UNKNOWN_SERVER_ERROR, error.to_string()),
    )
}

/// The partitions `framed` names (offsets without offsets).
fn read_partitions(
    env: &jni::Env<'_>,
    framed: &JByteArray<'_>,
) -> Result<Vec<TopicPartition>, NativeError> {
    let offsets = framing::offsets(&read_bytes(env, framed, "partitions")?)?;
    Ok(offsets.into_keys().collect())
}

/// Runs `callback` with the member at `address` and the partitions `framed` names (offsets
/// without offsets).
fn with_member_and_partitions(
    env: &jni::Env<'_>,
    address: jlong,
    framed: &JByteArray<'_>,
    callback: impl FnOnce(&JavaMember, &[TopicPartition]),
) -> Result<(), NativeError> {
    if address == 0 {
        return Err(NativeError::new(
            JavaException::NullPointer,
            "no engine member",
        ));
    }
    let partitions = read_partitions(env, framed)?;
    // SAFETY: Java calls back only with the address `JvmGroupMembership::join` gave it, whose
    // `Arc` the engine holds until the Java member is closed, after which it never calls back.
    let member = unsafe { &*(address as *const JavaMember) };
    callback(member, &partitions);
    Ok(())
}

/// `EngineGroupMember.partitionsRevoked`: the member's partitions leave it (`lost`: they were
/// given to another member already).
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_EngineGroupMember_partitionsRevoked<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    address: jlong,
    framed: JByteArray<'local>,
    lost: jboolean,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        with_member_and_partitions(env, address, &framed, |member, partitions| {
            member.listener.partitions_revoked(member, partitions, lost)
        })
    })
    .resolve::<ThrowJavaException>()
}

/// `EngineGroupMember.partitionsAssigned`: partitions were added to the member, which keeps
/// standby replicas of the tasks `standby_inputs` are the input partitions of.
#[unsafe(no_mangle)]
pub extern "system" fn Java_dev_sluice_streams_runtime_internals_EngineGroupMember_partitionsAssigned<
    'local,
>(
    mut env: EnvUnowned<'local>,
    _class: JClass<'local>,
    address: jlong,
    framed: JByteArray<'local>,
    standby_inputs: JByteArray<'local>,
) {
    env.with_env(|env| -> Result<(), NativeError> {
        let standby_inputs = read_partitions(env, &standby_inputs)?;
        with_member_and_partitions(env, address, &framed, |member, partitions| {
            member
                .listener
                .partitions_assigned(member, partitions, &standby_inputs)
        })
    })
    .resolve::<ThrowJavaException>()
}
