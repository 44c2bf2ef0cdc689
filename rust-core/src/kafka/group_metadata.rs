//! librdkafka's consumer group metadata as one owned native object: read out of a group
//! consumer into the engine's [`GroupMetadata`], or made from one for a transaction to send
//! its offsets with. The engine holds only the plain data, so whoever keeps the group
//! membership, librdkafka's consumer or another member, can say under which generation a
//! transaction commits.

use std::ffi::{c_char, CStr, CString};
use std::ptr::{self, NonNull};

use rdkafka::bindings as native;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};

use crate::kafka::clients::GroupMetadata;

/// The group metadata of librdkafka's `consumer` as it stands now; `None` for a consumer that
/// is no group member. Asking waits on librdkafka's main thread.
pub fn consumer_group_metadata<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
) -> Option<GroupMetadata> {
    NativeGroupMetadata::of_consumer(consumer.client().native_ptr()).map(|metadata| metadata.read())
}

/// An `rd_kafka_consumer_group_metadata_t`, destroyed when dropped.
pub(crate) struct NativeGroupMetadata(NonNull<native::rd_kafka_consumer_group_metadata_t>);

impl NativeGroupMetadata {
    /// The metadata of `client`'s consumer as it stands now; `None` for a client that is no
    /// group consumer.
    fn of_consumer(client: *mut native::rd_kafka_t) -> Option<Self> {
        // SAFETY: `client` is a live librdkafka client; the returned object is the caller's.
        NonNull::new(unsafe { native::rd_kafka_consumer_group_metadata(client) }).map(Self)
    }

    /// Native metadata saying what `group` says.
    pub(crate) fn new(group: &GroupMetadata) -> Self {
        let group_id = c_string(&group.group_id);
        let member_id = c_string(&group.member_id);
        let instance_id = group.instance_id.as_deref().map(c_string);
        // SAFETY: the strings outlive the call, which copies them; null stands for no
        // instance id.
        let metadata = unsafe {
            native::rd_kafka_consumer_group_metadata_new_with_genid(
                group_id.as_ptr(),
                group.generation,
                member_id.as_ptr(),
                instance_id.as_ref().map_or(ptr::null(), |id| id.as_ptr()),
            )
        };
        Self(NonNull::new(metadata).expect("librdkafka allocates group metadata or aborts"))
    }

    /// What the metadata says, owned.
    fn read(&self) -> GroupMetadata {
        let metadata = self.as_ptr();
        // SAFETY: the getters return strings owned by `metadata`, copied before it can go.
        unsafe {
            GroupMetadata {
                group_id: owned(native::rd_kafka_consumer_group_metadata_group_id(metadata))
                    .unwrap_or_default(),
                member_id: owned(native::rd_kafka_consumer_group_metadata_member_id(metadata))
                    .unwrap_or_default(),
                generation: native::rd_kafka_consumer_group_metadata_generation_id(metadata),
                instance_id: owned(native::rd_kafka_consumer_group_metadata_group_instance_id(
                    metadata,
                )),
            }
        }
    }

    pub(crate) fn as_ptr(&self) -> *const native::rd_kafka_consumer_group_metadata_t {
        self.0.as_ptr()
    }
}

// SAFETY: librdkafka never changes the metadata after making it and reads it from any thread;
// whoever owns it may hand it to another thread.
unsafe impl Send for NativeGroupMetadata {}

impl Drop for NativeGroupMetadata {
    fn drop(&mut self) {
        // SAFETY: the object came from librdkafka and is destroyed once, here.
        unsafe { native::rd_kafka_consumer_group_metadata_destroy(self.0.as_ptr()) }
    }
}

/// Group and member ids come from Kafka's protocol strings, which hold no NUL; one that did
/// would be cut there rather than refused, since the coordinator would not know it anyway.
fn c_string(text: &str) -> CString {
    let up_to_nul = text.split('\0').next().unwrap_or_default();
    CString::new(up_to_nul).expect("no NUL is left")
}

/// # Safety
/// `text` is null or a NUL-terminated string that lives through the call.
unsafe fn owned(text: *const c_char) -> Option<String> {
    (!text.is_null()).then(|| CStr::from_ptr(text).to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_metadata_goes_through_librdkafka_unchanged() {
        let group = GroupMetadata {
            group_id: "app".into(),
            member_id: "app-1-consumer-4f2a".into(),
            generation: 7,
            instance_id: Some("instance-1".into()),
        };
        assert_eq!(NativeGroupMetadata::new(&group).read(), group);

        let dynamic = GroupMetadata {
            instance_id: None,
            ..group
        };
        assert_eq!(NativeGroupMetadata::new(&dynamic).read(), dynamic);
    }
}
