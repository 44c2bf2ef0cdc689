//! The process id of an engine instance: a UUID kept in the application's state directory,
//! so that a restarted instance reuses its transactional ids. Its new producers then fence
//! the crashed instance's ones and abort their open transactions at once, instead of
//! leaving them to `transaction.timeout.ms`.

use std::fs;
use std::io::{self, Read};
use std::path::Path;

const FILE_NAME: &str = "sluice-process-id";

/// The process id stored in `application_dir`, created on first use.
pub fn load_or_create(application_dir: &Path) -> io::Result<String> {
    fs::create_dir_all(application_dir)?;
    let path = application_dir.join(FILE_NAME);
    if let Ok(existing) = fs::read_to_string(&path) {
        let existing = existing.trim();
        if is_uuid(existing) {
            return Ok(existing.to_string());
        }
    }
    let id = random_uuid()?;
    // Write then rename: a crash never leaves a torn id behind.
    let temporary = application_dir.join(format!("{FILE_NAME}.tmp"));
    fs::write(&temporary, &id)?;
    fs::rename(&temporary, &path)?;
    Ok(id)
}

fn random_uuid() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    bytes[6] = (bytes[6] & 0x0f) | 0x40; // version 4
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_create(dir.path()).unwrap();
        assert!(is_uuid(&first));
        assert_eq!(load_or_create(dir.path()).unwrap(), first);
    }
}
