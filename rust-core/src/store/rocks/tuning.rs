//! A store's own RocksDB settings, applied over the defaults of [`super::options`]: what a
//! user's `RocksDBConfigSetter` changed for that store. Settings carry RocksDB's option
//! names (`write_buffer_size`, `block_size`, …) and their values as text, so whoever reads
//! a setter's options only translates names and values.
//!
//! Only settings that leave a store's guarantees intact are accepted: the column family
//! layout, atomic flush, paranoid checks and the WAL mode stay Sluice's.

use rocksdb::{BlockBasedOptions, DBCompactionStyle, DBCompressionType, Options};

use crate::store::error::{Error, Result};

/// The settings of one store; empty by default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoreTuning {
    settings: Vec<Setting>,
}

/// Where a setting lives in RocksDB: the database, the data column family or its table.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Setting {
    MaxOpenFiles(i32),
    MaxBackgroundJobs(i32),
    MaxSubcompactions(u32),
    BytesPerSync(u64),
    WriteBufferSize(usize),
    MaxWriteBufferNumber(i32),
    MinWriteBufferNumberToMerge(i32),
    CompactionStyle(CompactionStyle),
    Compression(Compression),
    BottommostCompression(Compression),
    Level0FileNumCompactionTrigger(i32),
    Level0SlowdownWritesTrigger(i32),
    Level0StopWritesTrigger(i32),
    TargetFileSizeBase(u64),
    TargetFileSizeMultiplier(i32),
    MaxBytesForLevelBase(u64),
    MaxBytesForLevelMultiplier(f64),
    NumLevels(i32),
    LevelCompactionDynamicLevelBytes(bool),
    OptimizeFiltersForHits(bool),
    DisableAutoCompactions(bool),
    MaxCompactionBytes(u64),
    SoftPendingCompactionBytesLimit(usize),
    HardPendingCompactionBytesLimit(usize),
    PeriodicCompactionSeconds(u64),
    BlockSize(usize),
    BlockRestartInterval(i32),
    CacheIndexAndFilterBlocks(bool),
    CacheIndexAndFilterBlocksWithHighPriority(bool),
    PinL0FilterAndIndexBlocksInCache(bool),
    PinTopLevelIndexAndFilter(bool),
    FormatVersion(i32),
    WholeKeyFiltering(bool),
    /// Bits per key of the bloom filter; 0 means no filter.
    BloomFilterBitsPerKey(f64),
}

/// `DBCompactionStyle` without the `Copy`/`PartialEq` it lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CompactionStyle {
    Level,
    Universal,
    Fifo,
}

/// The compressions this build of RocksDB carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Snappy,
    Zlib,
    Lz4,
    Lz4hc,
    Zstd,
}

impl Compression {
    /// rocksdbjni's `CompressionType` names, lower-cased.
    fn parse(value: &str) -> std::result::Result<Self, String> {
        Ok(match value {
            "no_compression" => Compression::None,
            "snappy_compression" => Compression::Snappy,
            "zlib_compression" => Compression::Zlib,
            "lz4_compression" => Compression::Lz4,
            "lz4hc_compression" => Compression::Lz4hc,
            "zstd_compression" => Compression::Zstd,
            _ => return Err(malformed(
                value,
                "one of no, snappy, zlib, lz4, lz4hc or zstd compression (no other is built in)",
            )),
        })
    }

    fn rocksdb(self) -> DBCompressionType {
        match self {
            Compression::None => DBCompressionType::None,
            Compression::Snappy => DBCompressionType::Snappy,
            Compression::Zlib => DBCompressionType::Zlib,
            Compression::Lz4 => DBCompressionType::Lz4,
            Compression::Lz4hc => DBCompressionType::Lz4hc,
            Compression::Zstd => DBCompressionType::Zstd,
        }
    }
}

impl StoreTuning {
    /// Parses `(name, value)` pairs. An unknown name or a malformed value fails with
    /// [`Error::InvalidArgument`] naming it.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let settings = pairs
            .into_iter()
            .map(|(name, value)| {
                Setting::parse(name, value.trim()).map_err(|reason| {
                    Error::InvalidArgument(format!("RocksDB setting {name}: {reason}"))
                })
            })
            .collect::<Result<_>>()?;
        Ok(StoreTuning { settings })
    }

    /// The pairs [`StoreTuning::parse`] would refuse, each with the reason: what a caller
    /// names to the user before opening the store with the others.
    pub fn refusals<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Vec<(String, String)> {
        pairs
            .into_iter()
            .filter_map(|(name, value)| {
                Setting::parse(name, value.trim())
                    .err()
                    .map(|reason| (name.to_string(), reason))
            })
            .collect()
    }

    /// Whether the store keeps every default.
    pub fn is_empty(&self) -> bool {
        self.settings.is_empty()
    }

    /// The bloom filter's bits per key, when the tuning sets them.
    pub(super) fn bloom_filter_bits_per_key(&self) -> Option<f64> {
        self.settings
            .iter()
            .rev()
            .find_map(|setting| match setting {
                Setting::BloomFilterBitsPerKey(bits) => Some(*bits),
                _ => None,
            })
    }

    pub(super) fn apply_to_database(&self, options: &mut Options) {
        for setting in &self.settings {
            match *setting {
                Setting::MaxOpenFiles(n) => options.set_max_open_files(n),
                Setting::MaxBackgroundJobs(n) => options.set_max_background_jobs(n),
                Setting::MaxSubcompactions(n) => options.set_max_subcompactions(n),
                Setting::BytesPerSync(n) => options.set_bytes_per_sync(n),
                _ => {}
            }
        }
    }

    pub(super) fn apply_to_column_family(&self, options: &mut Options) {
        for setting in &self.settings {
            match *setting {
                Setting::WriteBufferSize(n) => options.set_write_buffer_size(n),
                Setting::MaxWriteBufferNumber(n) => options.set_max_write_buffer_number(n),
                Setting::MinWriteBufferNumberToMerge(n) => {
                    options.set_min_write_buffer_number_to_merge(n)
                }
                Setting::CompactionStyle(style) => options.set_compaction_style(match style {
                    CompactionStyle::Level => DBCompactionStyle::Level,
                    CompactionStyle::Universal => DBCompactionStyle::Universal,
                    CompactionStyle::Fifo => DBCompactionStyle::Fifo,
                }),
                Setting::Compression(compression) => {
                    options.set_compression_type(compression.rocksdb())
                }
                Setting::BottommostCompression(compression) => {
                    options.set_bottommost_compression_type(compression.rocksdb())
                }
                Setting::Level0FileNumCompactionTrigger(n) => {
                    options.set_level_zero_file_num_compaction_trigger(n)
                }
                Setting::Level0SlowdownWritesTrigger(n) => {
                    options.set_level_zero_slowdown_writes_trigger(n)
                }
                Setting::Level0StopWritesTrigger(n) => {
                    options.set_level_zero_stop_writes_trigger(n)
                }
                Setting::TargetFileSizeBase(n) => options.set_target_file_size_base(n),
                Setting::TargetFileSizeMultiplier(n) => options.set_target_file_size_multiplier(n),
                Setting::MaxBytesForLevelBase(n) => options.set_max_bytes_for_level_base(n),
                Setting::MaxBytesForLevelMultiplier(m) => {
                    options.set_max_bytes_for_level_multiplier(m)
                }
                Setting::NumLevels(n) => options.set_num_levels(n),
                Setting::LevelCompactionDynamicLevelBytes(on) => {
                    options.set_level_compaction_dynamic_level_bytes(on)
                }
                Setting::OptimizeFiltersForHits(on) => options.set_optimize_filters_for_hits(on),
                Setting::DisableAutoCompactions(on) => options.set_disable_auto_compactions(on),
                Setting::MaxCompactionBytes(n) => options.set_max_compaction_bytes(n),
                Setting::SoftPendingCompactionBytesLimit(n) => {
                    options.set_soft_pending_compaction_bytes_limit(n)
                }
                Setting::HardPendingCompactionBytesLimit(n) => {
                    options.set_hard_pending_compaction_bytes_limit(n)
                }
                Setting::PeriodicCompactionSeconds(n) => options.set_periodic_compaction_seconds(n),
                _ => {}
            }
        }
    }

    /// Applies the table settings; the bloom filter is left to the caller, see
    /// [`StoreTuning::bloom_filter_bits_per_key`].
    pub(super) fn apply_to_table(&self, table: &mut BlockBasedOptions) {
        for setting in &self.settings {
            match *setting {
                Setting::BlockSize(n) => table.set_block_size(n),
                Setting::BlockRestartInterval(n) => table.set_block_restart_interval(n),
                Setting::CacheIndexAndFilterBlocks(on) => {
                    table.set_cache_index_and_filter_blocks(on)
                }
                Setting::CacheIndexAndFilterBlocksWithHighPriority(on) => {
                    table.set_cache_index_and_filter_blocks_with_high_priority(on)
                }
                Setting::PinL0FilterAndIndexBlocksInCache(on) => {
                    table.set_pin_l0_filter_and_index_blocks_in_cache(on)
                }
                Setting::PinTopLevelIndexAndFilter(on) => {
                    table.set_pin_top_level_index_and_filter(on)
                }
                Setting::FormatVersion(n) => table.set_format_version(n),
                Setting::WholeKeyFiltering(on) => table.set_whole_key_filtering(on),
                _ => {}
            }
        }
    }
}

impl Setting {
    /// The setting, or why a store refuses it.
    fn parse(name: &str, value: &str) -> std::result::Result<Self, String> {
        let setting = match name {
            "max_open_files" => Setting::MaxOpenFiles(number(value)?),
            "max_background_jobs" => Setting::MaxBackgroundJobs(positive(value)?),
            "max_subcompactions" => Setting::MaxSubcompactions(positive(value)?),
            "bytes_per_sync" => Setting::BytesPerSync(number(value)?),
            "write_buffer_size" => Setting::WriteBufferSize(positive(value)?),
            "max_write_buffer_number" => Setting::MaxWriteBufferNumber(positive(value)?),
            "min_write_buffer_number_to_merge" => {
                Setting::MinWriteBufferNumberToMerge(positive(value)?)
            }
            "compaction_style" => Setting::CompactionStyle(match value {
                "level" => CompactionStyle::Level,
                "universal" => CompactionStyle::Universal,
                "fifo" => CompactionStyle::Fifo,
                _ => return Err(malformed(value, "level, universal or fifo")),
            }),
            "compression_type" => Setting::Compression(Compression::parse(value)?),
            "bottommost_compression_type" => {
                Setting::BottommostCompression(Compression::parse(value)?)
            }
            "level0_file_num_compaction_trigger" => {
                Setting::Level0FileNumCompactionTrigger(positive(value)?)
            }
            "level0_slowdown_writes_trigger" => {
                Setting::Level0SlowdownWritesTrigger(number(value)?)
            }
            "level0_stop_writes_trigger" => Setting::Level0StopWritesTrigger(number(value)?),
            "target_file_size_base" => Setting::TargetFileSizeBase(positive(value)?),
            "target_file_size_multiplier" => Setting::TargetFileSizeMultiplier(positive(value)?),
            "max_bytes_for_level_base" => Setting::MaxBytesForLevelBase(positive(value)?),
            "max_bytes_for_level_multiplier" => {
                Setting::MaxBytesForLevelMultiplier(positive(value)?)
            }
            "num_levels" => Setting::NumLevels(positive(value)?),
            "level_compaction_dynamic_level_bytes" => {
                Setting::LevelCompactionDynamicLevelBytes(flag(value)?)
            }
            "optimize_filters_for_hits" => Setting::OptimizeFiltersForHits(flag(value)?),
            "disable_auto_compactions" => Setting::DisableAutoCompactions(flag(value)?),
            "max_compaction_bytes" => Setting::MaxCompactionBytes(number(value)?),
            "soft_pending_compaction_bytes_limit" => {
                Setting::SoftPendingCompactionBytesLimit(number(value)?)
            }
            "hard_pending_compaction_bytes_limit" => {
                Setting::HardPendingCompactionBytesLimit(number(value)?)
            }
            "periodic_compaction_seconds" => Setting::PeriodicCompactionSeconds(number(value)?),
            "block_size" => Setting::BlockSize(positive(value)?),
            "block_restart_interval" => Setting::BlockRestartInterval(positive(value)?),
            "cache_index_and_filter_blocks" => Setting::CacheIndexAndFilterBlocks(flag(value)?),
            "cache_index_and_filter_blocks_with_high_priority" => {
                Setting::CacheIndexAndFilterBlocksWithHighPriority(flag(value)?)
            }
            "pin_l0_filter_and_index_blocks_in_cache" => {
                Setting::PinL0FilterAndIndexBlocksInCache(flag(value)?)
            }
            "pin_top_level_index_and_filter" => Setting::PinTopLevelIndexAndFilter(flag(value)?),
            "format_version" => Setting::FormatVersion(positive(value)?),
            "whole_key_filtering" => Setting::WholeKeyFiltering(flag(value)?),
            "bloom_filter_bits_per_key" => {
                let bits: f64 = number(value)?;
                if !(0.0..=100.0).contains(&bits) {
                    return Err(malformed(value, "between 0 and 100"));
                }
                Setting::BloomFilterBitsPerKey(bits)
            }
            _ => return Err("not a setting Sluice's stores take".to_string()),
        };
        Ok(setting)
    }
}

fn malformed(value: &str, expected: &str) -> String {
    format!("'{value}' is not {expected}")
}

fn number<T: std::str::FromStr>(value: &str) -> std::result::Result<T, String> {
    value
        .parse()
        .map_err(|_| malformed(value, "a number of the setting's type"))
}

/// A number above zero: RocksDB treats zero (or less) in these settings as a mistake or as
/// "disabled" in ways a store cannot run with.
fn positive<T: std::str::FromStr + PartialOrd + Default>(
    value: &str,
) -> std::result::Result<T, String> {
    let parsed: T = number(value)?;
    if parsed > T::default() {
        Ok(parsed)
    } else {
        Err(malformed(value, "above zero"))
    }
}

fn flag(value: &str) -> std::result::Result<bool, String> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(malformed(value, "true or false")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_are_parsed() {
        let tuning = StoreTuning::parse([
            ("write_buffer_size", "33554432"),
            ("compaction_style", "universal"),
            ("bloom_filter_bits_per_key", "0"),
            ("cache_index_and_filter_blocks", "false"),
        ])
        .unwrap();
        assert_eq!(
            tuning.settings,
            vec![
                Setting::WriteBufferSize(32 << 20),
                Setting::CompactionStyle(CompactionStyle::Universal),
                Setting::BloomFilterBitsPerKey(0.0),
                Setting::CacheIndexAndFilterBlocks(false),
            ]
        );
        assert_eq!(tuning.bloom_filter_bits_per_key(), Some(0.0));
        assert!(StoreTuning::default().is_empty());
    }

    #[test]
    fn unknown_names_and_bad_values_are_refused_by_name() {
        for (name, value) in [
            ("atomic_flush", "false"),
            ("write_buffer_size", "0"),
            ("write_buffer_size", "big"),
            ("compaction_style", "sideways"),
            ("compression_type", "bzlib2_compression"),
            ("optimize_filters_for_hits", "yes"),
            ("bloom_filter_bits_per_key", "-1"),
        ] {
            let error = StoreTuning::parse([(name, value)]).unwrap_err().to_string();
            assert!(error.contains(name), "{name}={value}: {error}");
        }
    }

    #[test]
    fn refusals_name_only_the_refused_pairs() {
        let refused = StoreTuning::refusals([
            ("block_size", "8192"),
            ("paranoid_checks", "false"),
            ("compression_type", "xpress_compression"),
            ("compression_type", "zstd_compression"),
        ]);
        let names: Vec<&str> = refused.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["paranoid_checks", "compression_type"]);
        assert!(refused[0].1.contains("not a setting"), "{refused:?}");
        assert!(refused[1].1.contains("no other is built in"), "{refused:?}");
    }
}
