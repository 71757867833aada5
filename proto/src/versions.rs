//! How two berth versions compare: a client and the daemon each refuse the other when it is
//! newer than itself.

/// Compares two `major.minor.patch` versions numerically (a pre-release
/// suffix is ignored). Unparsable parts count as zero, and so do missing
/// ones: "1.2" is "1.2.0".
pub fn compare_versions(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |v: &str| -> Vec<u64> {
        v.split(['-', '+'])
            .next()
            .unwrap_or("")
            .split('.')
            .map(|p| p.parse().unwrap_or(0))
            .collect()
    };
    let (a, b) = (parts(a), parts(b));
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    (0..a.len().max(b.len()))
        .map(|i| at(&a, i).cmp(&at(&b, i)))
        .find(|o| o.is_ne())
        .unwrap_or(std::cmp::Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn versions_compare_numerically_not_as_text() {
        assert_eq!(compare_versions("0.10.0", "0.9.9"), Ordering::Greater);
        assert_eq!(compare_versions("1.2.3", "1.2.3"), Ordering::Equal);
        assert_eq!(compare_versions("1.2.3-rc.1", "1.2.3"), Ordering::Equal);
        assert_eq!(compare_versions("1.2.3", "1.3.0"), Ordering::Less);
    }

    #[test]
    fn a_missing_part_counts_as_zero() {
        assert_eq!(compare_versions("1.2", "1.2.0"), Ordering::Equal);
        assert_eq!(compare_versions("1.2.0", "1.2"), Ordering::Equal);
        assert_eq!(compare_versions("1", "1.0.0-rc.2"), Ordering::Equal);
        assert_eq!(compare_versions("1.2", "1.2.1"), Ordering::Less);
        assert_eq!(compare_versions("1.3", "1.2.9"), Ordering::Greater);
        assert_eq!(compare_versions("", "0.0.0"), Ordering::Equal);
    }
}
