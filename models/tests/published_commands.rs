//! Every `cassandra-stress ...` command in the project's
//! `shared/reference/published-runs.md` (when that file is beside the
//! repository) parses, or, for the two R5 commands that carry
//! `<placeholders>` in the report, is rejected naming the placeholder; R6's
//! `user profile=...` commands parse to `user` with their `ops(...)`. The
//! exact settings of each are asserted by the fixture in the crate's unit
//! tests; this guards against the reference drifting away from it.

use models::cassandra_stress::parse;

#[test]
fn every_published_command_parses_or_names_its_placeholder() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/reference/published-runs.md"
    );
    let Ok(text) = std::fs::read_to_string(path) else {
        println!("{path} not found; published commands not checked");
        return;
    };
    let (mut commands, mut user_profiles) = (0, 0);
    for piece in text.split('`').skip(1).step_by(2) {
        if !piece.starts_with("cassandra-stress ") {
            continue;
        }
        if piece.starts_with("cassandra-stress user ") {
            let command = parse(piece)
                .unwrap_or_else(|error| panic!("R6 command does not parse: {piece}: {error}"));
            match command.operation {
                models::cassandra_stress::Operation::User { profile, ops, .. } => {
                    assert_eq!(profile, "size_based_load_intel.yaml", "{piece}");
                    assert!(
                        ops.len() == 1 && ["insert", "getdata"].contains(&ops[0].0.as_str()),
                        "{piece}: {ops:?}"
                    );
                }
                other => panic!("{piece}: parsed as {other:?}"),
            }
            user_profiles += 1;
            continue;
        }
        commands += 1;
        match parse(piece) {
            Ok(_) => {}
            Err(error) if piece.contains('<') => {
                assert!(
                    error.to_string().contains("placeholder"),
                    "{piece}: {error}"
                )
            }
            Err(error) => panic!("published command does not parse: {piece}: {error}"),
        }
    }
    assert_eq!(commands, 5, "published-runs.md holds five c-s commands");
    assert_eq!(user_profiles, 7, "and R6's seven user-profile commands");
}
