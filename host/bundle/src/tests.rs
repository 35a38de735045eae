use super::*;

/// A tiny stand-in for a component: the format only needs the Wasm magic.
fn component() -> Vec<u8> {
    let mut c = b"\0asm\x0d\x00\x01\x00".to_vec();
    c.extend((0..200u32).map(|i| (i * 7) as u8));
    c
}

fn manifest(component: &[u8]) -> Manifest {
    Manifest {
        name: "momentum".into(),
        version: "1.2.0".into(),
        world: "strategy".into(),
        description: "Top-N by momentum.\nRebalances monthly.".into(),
        licence: "MIT".into(),
        author: "A. Author <a@example.com>".into(),
        sha256: sha256_hex(component),
    }
}

fn bundle() -> (Vec<u8>, SigningKey) {
    let key = generate_key();
    let c = component();
    (sign(&c, &manifest(&c), &key).unwrap(), key)
}

/// Where the manifest JSON starts and ends in a bundle.
fn manifest_range(b: &[u8]) -> std::ops::Range<usize> {
    let len = u32::from_le_bytes(b[MAGIC.len()..MAGIC.len() + 4].try_into().unwrap()) as usize;
    let start = MAGIC.len() + 4;
    start..start + len
}

#[test]
fn round_trip() {
    let (b, key) = bundle();
    assert!(is_bundle(&b));
    assert!(!is_bundle(&component()));
    let o = open(&b).unwrap();
    assert_eq!(o.component, component());
    assert_eq!(o.manifest, manifest(&component()));
    assert_eq!(o.signer, key_id(&key.verifying_key()));
    assert!(o.signer.starts_with("ed25519:"));
    assert_eq!(parse_key_id(&o.signer).unwrap(), key.verifying_key());
}

#[test]
fn tampered_component_fails() {
    let (mut b, _) = bundle();
    let last = b.len() - 1;
    b[last] ^= 1;
    let e = open(&b).unwrap_err();
    assert!(matches!(e, BundleError::Signature { .. }), "{e}");
    assert!(e.to_string().contains("signature does not verify"), "{e}");
    // Appending bytes changes the component too.
    let (mut b, _) = bundle();
    b.push(0);
    assert!(matches!(open(&b), Err(BundleError::Signature { .. })));
}

#[test]
fn tampered_manifest_fails() {
    let (b, _) = bundle();
    let r = manifest_range(&b);
    let json = String::from_utf8(b[r.clone()].to_vec()).unwrap();
    let changed = json.replace("momentum", "momentun");
    assert_eq!(changed.len(), json.len());
    let mut t = b.clone();
    t[r].copy_from_slice(changed.as_bytes());
    let e = open(&t).unwrap_err();
    assert!(matches!(e, BundleError::Signature { .. }), "{e}");
}

#[test]
fn swapped_signer_key_fails() {
    // Replacing the embedded key by another's does not make the
    // signature that other key's.
    let (mut b, _) = bundle();
    let other = generate_key().verifying_key();
    let at = manifest_range(&b).end + 64;
    b[at..at + 32].copy_from_slice(other.as_bytes());
    let e = open(&b).unwrap_err();
    assert!(e.to_string().contains(&key_id(&other)), "{e}");
}

#[test]
fn manifest_sha256_must_match_the_component() {
    let key = generate_key();
    let c = component();
    let mut m = manifest(&c);
    m.sha256 = sha256_hex(b"other");
    let e = sign(&c, &m, &key).unwrap_err();
    assert!(e.to_string().contains("sha256 mismatch"), "{e}");

    // A bundle signed over a manifest naming another sha256 (built by
    // hand, as `sign` refuses to) is refused by `open`.
    let json = serde_json::to_vec(&m).unwrap();
    let digest = <sha2::Sha256 as sha2::Digest>::digest(&c);
    let mut msg = SIGNED_PREFIX.to_vec();
    msg.extend_from_slice(&(json.len() as u32).to_le_bytes());
    msg.extend_from_slice(&json);
    msg.extend_from_slice(&digest);
    let sig = ed25519_dalek::Signer::sign(&key, &msg);
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&(json.len() as u32).to_le_bytes());
    b.extend_from_slice(&json);
    b.extend_from_slice(&sig.to_bytes());
    b.extend_from_slice(key.verifying_key().as_bytes());
    b.extend_from_slice(&c);
    let e = open(&b).unwrap_err();
    assert!(matches!(e, BundleError::Sha256Mismatch { .. }), "{e}");
}

#[test]
fn truncated_input_is_refused_at_every_length() {
    let (b, _) = bundle();
    for n in 0..b.len() {
        let e = open(&b[..n]).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("truncated") || text.contains("bad magic") || text.contains("signature"),
            "{n}: {text}"
        );
    }
    assert!(matches!(open(b""), Err(BundleError::BadMagic)));
    assert!(matches!(
        open(&b[..5]),
        Err(BundleError::Truncated("magic"))
    ));
    let r = manifest_range(&b);
    assert!(matches!(
        open(&b[..r.end - 1]),
        Err(BundleError::Truncated("manifest"))
    ));
    assert!(matches!(
        open(&b[..r.end + 10]),
        Err(BundleError::Truncated("signature"))
    ));
    assert!(matches!(
        open(&b[..r.end + 64 + 32]),
        Err(BundleError::Truncated("component"))
    ));
}

#[test]
fn bad_magic_and_huge_lengths_are_refused() {
    assert!(matches!(open(&component()), Err(BundleError::BadMagic)));
    assert!(open(b"FEBUNDLE2\nxxxx")
        .unwrap_err()
        .to_string()
        .contains("bad magic"));
    // A length far beyond the input allocates nothing and is refused.
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&u32::MAX.to_le_bytes());
    b.extend_from_slice(b"{}");
    assert!(matches!(open(&b), Err(BundleError::ManifestLength(_))));
    let mut b = MAGIC.to_vec();
    b.extend_from_slice(&(MAX_MANIFEST_BYTES as u32).to_le_bytes());
    b.extend_from_slice(b"{}");
    assert!(matches!(open(&b), Err(BundleError::Truncated("manifest"))));
}

#[test]
fn not_wasm_payload_is_refused() {
    let key = generate_key();
    let c = b"hello".to_vec();
    let m = manifest(&c);
    assert!(matches!(sign(&c, &m, &key), Err(BundleError::NotWasm)));
}

#[test]
fn oversize_and_bad_fields_are_refused() {
    let key = generate_key();
    let c = component();
    type Change = Box<dyn Fn(&mut Manifest)>;
    let cases: Vec<(&str, Change)> = vec![
        ("name", Box::new(|m| m.name = "n".repeat(MAX_NAME + 1))),
        ("name", Box::new(|m| m.name = " ".into())),
        (
            "version",
            Box::new(|m| m.version = "1".repeat(MAX_VERSION + 1)),
        ),
        ("version", Box::new(|m| m.version = "1 0".into())),
        (
            "description",
            Box::new(|m| m.description = "d".repeat(MAX_DESCRIPTION + 1)),
        ),
        (
            "licence",
            Box::new(|m| m.licence = "l".repeat(MAX_LICENCE + 1)),
        ),
        (
            "author",
            Box::new(|m| m.author = "a".repeat(MAX_AUTHOR + 1)),
        ),
        ("author", Box::new(|m| m.author = "a\u{7}".into())),
        ("world", Box::new(|m| m.world = "scorer".into())),
        ("sha256", Box::new(|m| m.sha256 = m.sha256.to_uppercase())),
    ];
    for (field, change) in cases {
        let mut m = manifest(&c);
        change(&mut m);
        let e = sign(&c, &m, &key).unwrap_err();
        assert!(
            e.to_string().contains(&format!("manifest field `{field}`")),
            "{field}: {e}"
        );
    }
    // At the bounds, multibyte characters count as one.
    let mut m = manifest(&c);
    m.name = "é".repeat(MAX_NAME);
    m.description = "d".repeat(MAX_DESCRIPTION);
    m.author = "a".repeat(MAX_AUTHOR);
    m.licence = "l".repeat(MAX_LICENCE);
    m.version = "v".repeat(MAX_VERSION);
    let o = open(&sign(&c, &m, &key).unwrap()).unwrap();
    assert_eq!(o.manifest, m);
}

#[test]
fn unknown_manifest_fields_are_refused() {
    let m = manifest(&component());
    let mut v = serde_json::to_value(&m).unwrap();
    v["extra"] = serde_json::json!(1);
    let e = serde_json::from_value::<Manifest>(v).unwrap_err();
    assert!(e.to_string().contains("unknown field"), "{e}");
    // Optional fields may be omitted.
    let v = serde_json::json!({"name": "x", "version": "1.0.0", "world": "strategy", "sha256": m.sha256});
    let parsed: Manifest = serde_json::from_value(v).unwrap();
    parsed.validate().unwrap();
    assert_eq!(parsed.author, "");
}

#[test]
fn trust_list_decides_on_the_signer() {
    let (b, key) = bundle();
    let o = open(&b).unwrap();
    let other = key_id(&generate_key().verifying_key());
    let mine = key_id(&key.verifying_key());

    let any = TrustPolicy::parse("", true).unwrap();
    assert!(any.keys().is_empty());
    any.check_signed(&o.signer).unwrap();

    let others = TrustPolicy::parse(&other, true).unwrap();
    let e = others.check_signed(&o.signer).unwrap_err();
    assert!(
        e.contains(&mine) && e.contains("FORECAST_PLUGIN_TRUST"),
        "{e}"
    );

    let both = TrustPolicy::parse(&format!(" {other} , {mine},"), false).unwrap();
    assert_eq!(both.keys().len(), 2);
    both.check_signed(&o.signer).unwrap();

    for bad in ["ed25519:nope", "rsa:AAAA", "ed25519:AAAA"] {
        let e = TrustPolicy::parse(bad, true).unwrap_err();
        assert!(e.contains("FORECAST_PLUGIN_TRUST"), "{e}");
    }
}

#[test]
fn unsigned_policy() {
    TrustPolicy::parse("", true)
        .unwrap()
        .check_unsigned()
        .unwrap();
    let e = TrustPolicy::parse("", false)
        .unwrap()
        .check_unsigned()
        .unwrap_err();
    assert!(e.contains("FORECAST_PLUGIN_UNSIGNED"), "{e}");
}

#[test]
fn key_file_round_trip_mode_and_no_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signing.key");
    let key = generate_key();
    write_key(&path, &key).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_eq!(read_key(&path).unwrap().to_bytes(), key.to_bytes());
    let e = write_key(&path, &generate_key()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists);
    assert!(e.to_string().contains("refusing to overwrite"), "{e}");
    assert_eq!(read_key(&path).unwrap().to_bytes(), key.to_bytes());

    let junk = dir.path().join("junk");
    std::fs::write(&junk, "hello").unwrap();
    let e = read_key(&junk).unwrap_err();
    assert!(e.to_string().contains("not a key file"), "{e}");
    assert!(read_key(dir.path().join("missing")).is_err());
}
