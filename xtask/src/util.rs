//! Small helpers with no better home: a hash that stays the same across Rust releases.

/// FNV-1a over `text`: stable across toolchains and runs (std's `DefaultHasher` is not), so
/// folder names derived from it survive a Rust update.
pub fn stable_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::stable_hash;

    #[test]
    fn fnv1a_matches_the_reference_vectors() {
        assert_eq!(stable_hash(""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(stable_hash("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(stable_hash("foobar"), 0x8594_4171_f739_67e8);
    }
}
