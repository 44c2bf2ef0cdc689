//! A scan read in chunks: as many framed entries as fit in the caller's buffer per call.

use super::framing;
use crate::store::{self, KeyValueIterator};

/// What one call hands back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Chunk<'a> {
    /// `count` framed entries, in scan order, filling `bytes`.
    Entries { count: usize, bytes: &'a [u8] },
    /// The next entry alone needs a buffer of this many bytes; it is kept for the next call.
    NeedsCapacity(usize),
    /// No entries remain.
    Exhausted,
}

/// A scan plus the state that spans chunks: a failure met after a chunk already had
/// entries, and the buffer chunks are framed in. An entry that does not fit stays in the
/// scan for the next call.
pub(crate) struct ChunkedScan {
    entries: KeyValueIterator,
    failure: Option<store::Error>,
    framed: Vec<u8>,
}

impl ChunkedScan {
    pub(crate) fn new(entries: KeyValueIterator) -> Self {
        ChunkedScan {
            entries,
            failure: None,
            framed: Vec::new(),
        }
    }

    /// The next entries that fit in `capacity` bytes, framed straight from where the scan
    /// holds them. A failure is reported once the entries read before it were handed back.
    pub(crate) fn next_chunk(&mut self, capacity: usize) -> store::Result<Chunk<'_>> {
        if let Some(failure) = self.failure.take() {
            return Err(failure);
        }
        self.framed.clear();
        let mut count = 0;
        loop {
            let framed = &mut self.framed;
            let mut too_large = 0;
            let offered = self.entries.offer_next(&mut |key, value| {
                let needed = framing::framed_len(key, value);
                if framed.len() + needed > capacity {
                    too_large = needed;
                    return false;
                }
                framing::put_entry(framed, key, value);
                true
            });
            match offered {
                None => break,
                Some(Ok(true)) => count += 1,
                Some(Ok(false)) if count == 0 => return Ok(Chunk::NeedsCapacity(too_large)),
                Some(Ok(false)) => break,
                Some(Err(failure)) if count == 0 => return Err(failure),
                Some(Err(failure)) => {
                    self.failure = Some(failure);
                    break;
                }
            }
        }
        if count == 0 {
            return Ok(Chunk::Exhausted);
        }
        Ok(Chunk::Entries {
            count,
            bytes: &self.framed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::KeyValue;

    fn scan(entries: Vec<store::Result<KeyValue>>) -> ChunkedScan {
        ChunkedScan::new(KeyValueIterator::new(entries.into_iter()))
    }

    fn entry(key: &str, value: &str) -> store::Result<KeyValue> {
        Ok((key.as_bytes().to_vec(), value.as_bytes().to_vec()))
    }

    #[test]
    fn entries_are_split_across_chunks_without_loss() {
        let mut chunks = scan(vec![entry("a", "1"), entry("b", "2"), entry("c", "3")]);
        // Each entry frames to 10 bytes: two fit in 25.
        match chunks.next_chunk(25).unwrap() {
            Chunk::Entries { count, bytes } => {
                assert_eq!(count, 2);
                assert_eq!(bytes.len(), 20);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            chunks.next_chunk(25).unwrap(),
            Chunk::Entries { count: 1, .. }
        ));
        assert_eq!(chunks.next_chunk(25).unwrap(), Chunk::Exhausted);
    }

    #[test]
    fn an_entry_larger_than_the_buffer_asks_for_capacity_and_waits() {
        let mut chunks = scan(vec![entry("key", "a long value")]);
        assert_eq!(chunks.next_chunk(8).unwrap(), Chunk::NeedsCapacity(23));
        assert!(matches!(
            chunks.next_chunk(23).unwrap(),
            Chunk::Entries { count: 1, .. }
        ));
    }

    #[test]
    fn a_failure_after_entries_comes_with_the_next_call() {
        let mut chunks = scan(vec![
            entry("a", "1"),
            Err(store::Error::InvalidArgument("broken".into())),
        ]);
        assert!(matches!(
            chunks.next_chunk(100).unwrap(),
            Chunk::Entries { count: 1, .. }
        ));
        assert!(chunks.next_chunk(100).is_err());
    }
}
