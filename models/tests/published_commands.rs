//! Every `cassandra-stress ...` command in the project's
//! `shared/reference/published-runs.md` (when that file is beside the
//! repository) parses, or, for the two R5 commands that carry
//! `<placeholders>` in the report, is rejected naming the placeholder. The
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
            // R6's `user profile=...` commands wait for the user-profiles
            // issue; until then they are refused, naming the command.
            let error = parse(piece).expect_err("user profiles are not parsed yet");
            assert!(error.to_string().contains("user"), "{piece}: {error}");
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
    assert!(user_profiles > 0, "and R6's user-profile commands");
}
