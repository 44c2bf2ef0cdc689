//! The byte layout of a store's values, recorded with its data, and the upgrades between
//! layouts.
//!
//! A bytes store holds whatever Kafka Streams' typed layers above it put in: plain values,
//! values behind their timestamp, or values behind their headers (and timestamp). A store
//! records the layout it was opened with, committed like its offsets. Opened again with a
//! layout that extends the recorded one (a plain store becoming timestamped, a timestamped
//! one headers-aware), every value is rewritten in place with what the new layout puts in
//! front of it: the timestamp -1 ("unknown") and no headers, the values Kafka Streams'
//! own stores give data written before such an upgrade. Opened with a layout that cannot
//! read the recorded one, the store is refused, as Kafka Streams refuses a downgrade.
//!
//! The rewrite goes in chunks, each committed with how far it got, so a crash during it
//! resumes where it stopped instead of prefixing a value twice.

use crate::store::error::{Error, Result};

/// A layout of values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueLayout {
    /// The value alone.
    Plain,
    /// Timestamp (8 bytes, big-endian) ‖ value.
    Timestamped,
    /// Headers (Kafka Streams' header serialization, `0x00` for none) ‖ timestamp ‖ value.
    TimestampedWithHeaders,
    /// Headers ‖ value: session stores, whose sessions carry their own times.
    WithHeaders,
}

/// The timestamp Kafka Streams gives a value that had none: -1, big-endian.
const UNKNOWN_TIMESTAMP: [u8; 8] = [0xff; 8];
/// Kafka Streams' serialization of no headers.
const NO_HEADERS: [u8; 1] = [0x00];
const NO_HEADERS_UNKNOWN_TIMESTAMP: [u8; 9] =
    [0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];

impl ValueLayout {
    /// The layout of a code [`code`](Self::code) gave.
    pub fn from_code(code: u8) -> Option<ValueLayout> {
        match code {
            0 => Some(ValueLayout::Plain),
            1 => Some(ValueLayout::Timestamped),
            2 => Some(ValueLayout::TimestampedWithHeaders),
            3 => Some(ValueLayout::WithHeaders),
            _ => None,
        }
    }

    /// The layout's code, as it is recorded and as the JVM names it.
    pub fn code(self) -> u8 {
        match self {
            ValueLayout::Plain => 0,
            ValueLayout::Timestamped => 1,
            ValueLayout::TimestampedWithHeaders => 2,
            ValueLayout::WithHeaders => 3,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ValueLayout::Plain => "regular",
            ValueLayout::Timestamped => "timestamped",
            ValueLayout::TimestampedWithHeaders => "headers-aware timestamped",
            ValueLayout::WithHeaders => "headers-aware",
        }
    }

    /// What an upgrade from `self` to `to` puts in front of every value; `None` when `to`
    /// cannot hold `self`'s values.
    fn upgrade_prefix(self, to: ValueLayout) -> Option<&'static [u8]> {
        match (self, to) {
            (ValueLayout::Plain, ValueLayout::Timestamped) => Some(&UNKNOWN_TIMESTAMP),
            (ValueLayout::Plain, ValueLayout::TimestampedWithHeaders) => {
                Some(&NO_HEADERS_UNKNOWN_TIMESTAMP)
            }
            (ValueLayout::Timestamped, ValueLayout::TimestampedWithHeaders) => Some(&NO_HEADERS),
            (ValueLayout::Plain, ValueLayout::WithHeaders) => Some(&NO_HEADERS),
            _ => None,
        }
    }
}

/// A store's recorded layout and, while one is under way, the upgrade to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedLayout {
    /// The layout the store was last opened with.
    pub layout: ValueLayout,
    /// Set while values are still being rewritten into `layout`.
    pub upgrade: Option<UpgradeProgress>,
}

/// How far an upgrade got: every data key up to `done_through` holds the new layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpgradeProgress {
    /// The layout the values are rewritten from.
    pub from: ValueLayout,
    /// The last key rewritten (or, when it held no value, passed).
    pub done_through: Vec<u8>,
}

/// What opening a store with a layout does to its values.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Settlement {
    /// They are in that layout already.
    Nothing,
    /// The layout is recorded; the values stay. A store that recorded none is new, or was
    /// written before stores recorded their layout, by the same application.
    Record,
    /// Every value after `after` (all of them when `None`) gets `prefix` in front of it.
    Rewrite {
        from: ValueLayout,
        prefix: &'static [u8],
        after: Option<Vec<u8>>,
    },
}

/// What opening `store`, a `kind` store ("key-value", "window", "session": how its
/// refusal names it) whose recorded layout is `recorded`, as `wanted` does; an error when
/// `wanted` cannot read the recorded values.
pub(crate) fn settle(
    store: &str,
    kind: &str,
    recorded: Option<&RecordedLayout>,
    wanted: ValueLayout,
) -> Result<Settlement> {
    let Some(recorded) = recorded else {
        return Ok(Settlement::Record);
    };
    let (from, after) = match &recorded.upgrade {
        None if recorded.layout == wanted => return Ok(Settlement::Nothing),
        None => (recorded.layout, None),
        Some(progress) if recorded.layout == wanted => {
            (progress.from, Some(progress.done_through.clone()))
        }
        // An upgrade that did not finish, to another layout: its values are in two layouts.
        Some(progress) => return Err(refused(store, kind, progress.from, wanted, true)),
    };
    match from.upgrade_prefix(wanted) {
        Some(prefix) => Ok(Settlement::Rewrite {
            from,
            prefix,
            after,
        }),
        None => Err(refused(store, kind, recorded.layout, wanted, false)),
    }
}

fn refused(
    store: &str,
    kind: &str,
    recorded: ValueLayout,
    wanted: ValueLayout,
    unfinished: bool,
) -> Error {
    let unfinished = if unfinished {
        " being upgraded to another layout"
    } else {
        ""
    };
    let (recorded, wanted) = (recorded.describe(), wanted.describe());
    Error::IncompatibleLayout {
        store: store.to_string(),
        reason: format!(
            "it was created with incompatible settings: it is a {recorded} {kind} store{unfinished} \
             and cannot be opened as a {wanted} {kind} store. Downgrade from {recorded} to {wanted} \
             store is not supported: delete the store's local state (for instance with \
             KafkaStreams#cleanUp) to rebuild it from its changelog"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ValueLayout::*;

    fn recorded(layout: ValueLayout) -> RecordedLayout {
        RecordedLayout {
            layout,
            upgrade: None,
        }
    }

    #[test]
    fn codes_round_trip_and_unknown_codes_are_none() {
        for layout in [Plain, Timestamped, TimestampedWithHeaders, WithHeaders] {
            assert_eq!(ValueLayout::from_code(layout.code()), Some(layout));
        }
        assert_eq!(ValueLayout::from_code(4), None);
    }

    #[test]
    fn upgrades_prefix_what_kafka_streams_gives_old_values() {
        let rewrite = |from, to| match settle("s", "key-value", Some(&recorded(from)), to).unwrap()
        {
            Settlement::Rewrite { prefix, after, .. } => {
                assert_eq!(after, None);
                prefix.to_vec()
            }
            other => panic!("{from:?} -> {to:?}: {other:?}"),
        };
        assert_eq!(rewrite(Plain, Timestamped), (-1i64).to_be_bytes());
        assert_eq!(rewrite(Timestamped, TimestampedWithHeaders), [0]);
        let mut plain_to_headers = vec![0];
        plain_to_headers.extend_from_slice(&(-1i64).to_be_bytes());
        assert_eq!(rewrite(Plain, TimestampedWithHeaders), plain_to_headers);
        assert_eq!(rewrite(Plain, WithHeaders), [0]);
    }

    #[test]
    fn same_layout_needs_nothing_and_none_recorded_is_recorded() {
        assert_eq!(
            settle("s", "key-value", Some(&recorded(Timestamped)), Timestamped).unwrap(),
            Settlement::Nothing
        );
        assert_eq!(
            settle("s", "key-value", None, Plain).unwrap(),
            Settlement::Record
        );
    }

    #[test]
    fn downgrades_are_refused_naming_the_store_and_both_layouts() {
        for (from, to) in [
            (Timestamped, Plain),
            (TimestampedWithHeaders, Timestamped),
            (TimestampedWithHeaders, Plain),
            (WithHeaders, Plain),
            (Timestamped, WithHeaders),
        ] {
            let error = settle("counts", "key-value", Some(&recorded(from)), to).unwrap_err();
            assert!(matches!(error, Error::IncompatibleLayout { .. }), "{error}");
            let message = error.to_string();
            assert!(message.contains("counts"), "{message}");
            assert!(message.contains("Downgrade"), "{message}");
            assert!(message.contains(from.describe()), "{message}");
        }
        // Kafka Streams' own words, which its users and tests look for.
        let message = settle("counts", "key-value", Some(&recorded(Timestamped)), Plain)
            .unwrap_err()
            .to_string();
        for words in [
            "created with incompatible settings",
            "it is a timestamped key-value store",
            "Downgrade from timestamped to regular store is not supported",
        ] {
            assert!(message.contains(words), "{message}");
        }
    }

    #[test]
    fn an_unfinished_upgrade_resumes_after_its_last_key_or_is_refused_for_another_layout() {
        let unfinished = RecordedLayout {
            layout: TimestampedWithHeaders,
            upgrade: Some(UpgradeProgress {
                from: Timestamped,
                done_through: b"k7".to_vec(),
            }),
        };
        assert_eq!(
            settle("s", "key-value", Some(&unfinished), TimestampedWithHeaders).unwrap(),
            Settlement::Rewrite {
                from: Timestamped,
                prefix: &NO_HEADERS,
                after: Some(b"k7".to_vec()),
            }
        );
        assert!(settle("s", "key-value", Some(&unfinished), Timestamped).is_err());
    }

    #[test]
    fn an_interrupted_upgrade_rewrites_only_the_keys_after_the_last_one_it_recorded() {
        use crate::store::memory::MemoryState;
        use crate::store::offsets::StoredOffsets;
        use crate::store::transactional::TransactionalStore;
        use crate::store::{CommitMetadata, IsolationLevel, KeyValueStore};

        let interrupted = RecordedLayout {
            layout: Timestamped,
            upgrade: Some(UpgradeProgress {
                from: Plain,
                done_through: b"k2".to_vec(),
            }),
        };
        let offsets = StoredOffsets::from_parts(Default::default(), None, Some(interrupted));
        let store = TransactionalStore::with_backend("s", MemoryState::default(), offsets);
        let timestamped = |plain: &[u8]| [&UNKNOWN_TIMESTAMP[..], plain].concat();
        store.put(b"k1".to_vec(), Some(timestamped(b"1"))).unwrap();
        store.put(b"k2".to_vec(), Some(timestamped(b"2"))).unwrap();
        store.put(b"k3".to_vec(), Some(b"3".to_vec())).unwrap();
        store.put(b"k4".to_vec(), Some(b"4".to_vec())).unwrap();
        store.commit(&CommitMetadata::default()).unwrap();

        assert_eq!(
            store
                .settle_value_layout(Timestamped, "key-value", &|_| true)
                .unwrap(),
            Some(Plain)
        );
        for (key, plain) in [(b"k1", b"1"), (b"k2", b"2"), (b"k3", b"3"), (b"k4", b"4")] {
            let value = store.get(key, IsolationLevel::ReadCommitted).unwrap();
            assert_eq!(value, Some(timestamped(plain)), "{key:?}");
        }
        assert_eq!(
            store
                .settle_value_layout(Timestamped, "key-value", &|_| true)
                .unwrap(),
            None,
            "the finished upgrade is recorded"
        );
    }
}
