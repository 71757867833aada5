//! How the hot-path clients start (docs/decisions/0024-static-clients.md).

/// Whether an ELF executable names a program interpreter (`PT_INTERP`), i.e.
/// whether the dynamic loader runs before it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn has_interpreter(path: &std::path::Path) -> bool {
    let elf = std::fs::read(path).unwrap();
    assert_eq!(
        &elf[..5],
        b"\x7fELF\x02",
        "{}: not a 64-bit ELF",
        path.display()
    );
    let u16_at = |o: usize| usize::from(u16::from_le_bytes([elf[o], elf[o + 1]]));
    let phoff = usize::try_from(u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap())).unwrap();
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) == 3
    })
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn berth_the_hook_and_the_mcp_shim_are_linked_static_so_no_loader_runs() {
    for name in ["berth", "berth-hook", "berth-mcp"] {
        let path = berth_tests::bin(name);
        assert!(
            !has_interpreter(&path),
            "{} is linked dynamically: its build script should link it static \
             (is BERTH_DYNAMIC_CLIENTS set, or glibc's static libraries missing?)",
            path.display()
        );
    }
    // The daemon keeps the ordinary link.
    assert!(has_interpreter(&berth_tests::bin("berthd")));
}
