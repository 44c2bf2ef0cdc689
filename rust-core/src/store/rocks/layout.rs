//! On-disk layout of a RocksDB store.
//!
//! Column family `default` holds the store's keys and values unchanged. Column family
//! `offsets` holds, each under a one-byte tag:
//!
//! | key | value |
//! |-----|-------|
//! | `0x00` `sluice.store.format` | format version, ASCII (`1`) |
//! | `0x01` partition (i32, big-endian) topic (UTF-8) | changelog offset (i64, big-endian) |
//! | `0x02` | interactive-query position, opaque bytes |
//! | `0x03` | layout of the values ([`ValueLayout::code`]), one byte |
//! | `0x04` | while an upgrade of the values is under way: the layout they come from (one byte) ‖ the last key rewritten |
//!
//! The format marker is written durably when the store is created. A directory without it
//! was not created by Sluice (or its creation never completed) and is refused.

use std::collections::BTreeMap;

use crate::store::offsets::{OffsetChange, StoredOffsets, TopicPartition};
use crate::store::value_layout::{RecordedLayout, UpgradeProgress, ValueLayout};

/// Column family of the data.
pub(crate) const DATA_CF: &str = "default";
/// Column family of offsets, position and format marker.
pub(crate) const OFFSETS_CF: &str = "offsets";

/// Key of the format marker.
pub(crate) const FORMAT_KEY: &[u8] = b"\x00sluice.store.format";
/// The format this code writes and reads.
pub(crate) const FORMAT_VERSION: &[u8] = b"1";

const OFFSET_TAG: u8 = 0x01;
const POSITION_KEY: &[u8] = &[0x02];
const VALUE_LAYOUT_KEY: &[u8] = &[0x03];
const LAYOUT_UPGRADE_KEY: &[u8] = &[0x04];

/// The `offsets` column family entry a change writes: `(key, Some(value))` to put,
/// `(key, None)` to delete.
pub(crate) fn encode_change(change: &OffsetChange) -> (Vec<u8>, Option<Vec<u8>>) {
    match change {
        OffsetChange::Set(partition, offset) => {
            (offset_key(partition), Some(offset.to_be_bytes().to_vec()))
        }
        OffsetChange::Remove(partition) => (offset_key(partition), None),
        OffsetChange::Position(position) => (POSITION_KEY.to_vec(), Some(position.clone())),
        OffsetChange::ValueLayout(layout) => (VALUE_LAYOUT_KEY.to_vec(), Some(vec![layout.code()])),
        OffsetChange::LayoutUpgrade(progress) => (
            LAYOUT_UPGRADE_KEY.to_vec(),
            progress
                .as_ref()
                .map(|progress| [&[progress.from.code()][..], &progress.done_through].concat()),
        ),
    }
}

fn offset_key(partition: &TopicPartition) -> Vec<u8> {
    let mut key = Vec::with_capacity(5 + partition.topic.len());
    key.push(OFFSET_TAG);
    key.extend_from_slice(&partition.partition.to_be_bytes());
    key.extend_from_slice(partition.topic.as_bytes());
    key
}

/// Rebuilds the offsets from every entry of the `offsets` column family, checking the
/// format marker. `Err` says what is wrong, for a corruption report.
pub(crate) fn decode_offsets(entries: Vec<(Vec<u8>, Vec<u8>)>) -> Result<StoredOffsets, String> {
    // The marker is checked first: for a foreign directory, "not ours" says more than
    // whichever of its keys happens to be unreadable.
    match entries.iter().find(|(key, _)| key == FORMAT_KEY) {
        None => {
            return Err(
                "no format marker: not created by Sluice, or its creation did not complete".into(),
            )
        }
        Some((_, version)) if version != FORMAT_VERSION => {
            return Err(format!(
                "format version {:?}, expected {:?}",
                String::from_utf8_lossy(version),
                String::from_utf8_lossy(FORMAT_VERSION)
            ))
        }
        Some(_) => {}
    }
    let mut offsets = BTreeMap::new();
    let mut position = None;
    let mut layout = None;
    let mut upgrade = None;
    for (key, value) in entries {
        if key == FORMAT_KEY {
            continue;
        } else if key == POSITION_KEY {
            position = Some(value);
        } else if key == VALUE_LAYOUT_KEY {
            layout = Some(decode_layout(value.first().copied(), value.len())?);
        } else if key == LAYOUT_UPGRADE_KEY {
            upgrade = Some(UpgradeProgress {
                from: decode_layout(value.first().copied(), 1)?,
                done_through: value[1..].to_vec(),
            });
        } else if key.first() == Some(&OFFSET_TAG) && key.len() > 5 {
            let partition = i32::from_be_bytes(key[1..5].try_into().expect("four bytes"));
            let topic = String::from_utf8(key[5..].to_vec())
                .map_err(|_| format!("offset key {key:02x?} has a topic that is not UTF-8"))?;
            let offset = <[u8; 8]>::try_from(value.as_slice())
                .map(i64::from_be_bytes)
                .map_err(|_| {
                    format!(
                        "offset of {topic}-{partition} is {} bytes, not 8",
                        value.len()
                    )
                })?;
            offsets.insert(TopicPartition { topic, partition }, offset);
        } else {
            return Err(format!(
                "unknown key {key:02x?} in the offsets column family"
            ));
        }
    }
    let value_layout = match (layout, upgrade) {
        (Some(layout), upgrade) => Some(RecordedLayout { layout, upgrade }),
        (None, None) => None,
        (None, Some(_)) => return Err("an upgrade of the values but no value layout".into()),
    };
    Ok(StoredOffsets::from_parts(offsets, position, value_layout))
}

/// The layout of a recorded code, which must be the value's only byte when `len` is 1.
fn decode_layout(code: Option<u8>, len: usize) -> Result<ValueLayout, String> {
    code.filter(|_| len == 1)
        .and_then(ValueLayout::from_code)
        .ok_or_else(|| format!("value layout {code:?} ({len} bytes) is not one Sluice knows"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn persisted(changes: &[OffsetChange]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut entries = BTreeMap::new();
        entries.insert(FORMAT_KEY.to_vec(), FORMAT_VERSION.to_vec());
        for change in changes {
            match encode_change(change) {
                (key, Some(value)) => entries.insert(key, value),
                (key, None) => entries.remove(&key),
            };
        }
        entries.into_iter().collect()
    }

    #[test]
    fn changes_round_trip() {
        let a = TopicPartition::new("app-counts-changelog", 3);
        let b = TopicPartition::new("app-counts-changelog", 300);
        let entries = persisted(&[
            OffsetChange::Set(a.clone(), 42),
            OffsetChange::Set(b.clone(), i64::MAX),
            OffsetChange::Position(b"position".to_vec()),
            OffsetChange::Set(a.clone(), 43),
        ]);
        let decoded = decode_offsets(entries.clone()).unwrap();
        assert_eq!(decoded.offset(&a), Some(43));
        assert_eq!(decoded.offset(&b), Some(i64::MAX));
        assert_eq!(decoded.position(), Some(&b"position"[..]));
        let mut entries = entries;
        let (removed_key, _) = encode_change(&OffsetChange::Remove(a.clone()));
        entries.retain(|(key, _)| *key != removed_key);
        assert_eq!(decode_offsets(entries).unwrap().offset(&a), None);
    }

    #[test]
    fn value_layout_and_upgrade_progress_round_trip() {
        let progress = UpgradeProgress {
            from: ValueLayout::Plain,
            done_through: b"key-9".to_vec(),
        };
        let entries = persisted(&[
            OffsetChange::ValueLayout(ValueLayout::TimestampedWithHeaders),
            OffsetChange::LayoutUpgrade(Some(progress.clone())),
        ]);
        let decoded = decode_offsets(entries.clone()).unwrap();
        assert_eq!(
            decoded.value_layout(),
            Some(&RecordedLayout {
                layout: ValueLayout::TimestampedWithHeaders,
                upgrade: Some(progress),
            })
        );
        let mut entries = entries;
        let (finished_key, finished) = encode_change(&OffsetChange::LayoutUpgrade(None));
        assert_eq!(finished, None);
        entries.retain(|(key, _)| *key != finished_key);
        assert_eq!(
            decode_offsets(entries)
                .unwrap()
                .value_layout()
                .unwrap()
                .upgrade,
            None
        );
        let unknown_code = persisted(&[])
            .into_iter()
            .chain([(VALUE_LAYOUT_KEY.to_vec(), vec![9])]);
        assert!(decode_offsets(unknown_code.collect())
            .unwrap_err()
            .contains("value layout"));
    }

    #[test]
    fn missing_marker_wrong_version_and_garbage_are_refused() {
        assert!(decode_offsets(Vec::new())
            .unwrap_err()
            .contains("no format marker"));
        let wrong_version = vec![(FORMAT_KEY.to_vec(), b"7".to_vec())];
        assert!(decode_offsets(wrong_version)
            .unwrap_err()
            .contains("format version"));
        let mut garbage = persisted(&[]);
        garbage.push((b"checkpoint".to_vec(), b"1".to_vec()));
        assert!(decode_offsets(garbage).unwrap_err().contains("unknown key"));
        let mut short_offset = persisted(&[]);
        short_offset.push((offset_key(&TopicPartition::new("t", 0)), vec![1, 2]));
        assert!(decode_offsets(short_offset).is_err());
    }
}
