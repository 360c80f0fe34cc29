//! From the pasted command line to c-s's parameter list: shell-like word
//! splitting (quotes, backslashes), then c-s's own `repairParams`
//! (`StressSettings.java`), which joins the words with spaces, removes
//! whitespace around `,` `=` `(` `)` and splits again on spaces. So
//! `-rate 'threads=150 limit=20000/s'` and `-rate threads=150 limit=20000/s`
//! give the same parameters, and `ratio(write=1, read=1)` is one parameter.

use super::{show, StressError};

/// Splits `command` into words as a POSIX shell would for a plain command:
/// whitespace separates words; `'...'` is literal; `"..."` is literal except
/// for `\"`, `\\`, `\$`, `` \` `` and backslash-newline; outside quotes a
/// backslash escapes the next character and backslash-newline joins lines.
/// An unclosed quote is an error. A `<placeholder>` (`<` directly followed
/// by a letter, up to the next `>`) stays inside one word so that the caller
/// can reject it by name.
pub(super) fn shell_words(command: &str) -> Result<Vec<Word>, StressError> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut placeholder: Option<String> = None;
    let mut chars = command.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(Word {
                        text: std::mem::take(&mut current),
                        placeholder: placeholder.take(),
                    });
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                let mut closed = false;
                for (_, q) in chars.by_ref() {
                    if q == '\'' {
                        closed = true;
                        break;
                    }
                    current.push(q);
                }
                if !closed {
                    return Err(unclosed(&command[at..], '\''));
                }
            }
            '"' => {
                in_word = true;
                let mut closed = false;
                while let Some((_, q)) = chars.next() {
                    match q {
                        '"' => {
                            closed = true;
                            break;
                        }
                        '\\' => match chars.peek() {
                            Some(&(_, next @ ('"' | '\\' | '$' | '`'))) => {
                                current.push(next);
                                chars.next();
                            }
                            Some(&(_, '\n')) => {
                                chars.next();
                            }
                            _ => current.push('\\'),
                        },
                        other => current.push(other),
                    }
                }
                if !closed {
                    return Err(unclosed(&command[at..], '"'));
                }
            }
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, escaped)) => {
                    in_word = true;
                    current.push(escaped);
                }
                None => {
                    let word = format!("{current}\\");
                    return Err(StressError::new(
                        &word,
                        format!("dangling backslash at the end of `{}`: remove it or escape a character with it", show(&word)),
                    ));
                }
            },
            '<' if matches!(chars.peek(), Some(&(_, next)) if next.is_ascii_alphabetic()) => {
                in_word = true;
                match command[at..].find('>') {
                    Some(len) => {
                        let text = &command[at..=at + len];
                        current.push_str(text);
                        if placeholder.is_none() {
                            placeholder = Some(text.to_string());
                        }
                        // Skip the rest of the placeholder.
                        while let Some(&(i, _)) = chars.peek() {
                            if i > at + len {
                                break;
                            }
                            chars.next();
                        }
                    }
                    None => current.push('<'),
                }
            }
            other => {
                in_word = true;
                current.push(other);
            }
        }
    }
    if in_word {
        words.push(Word {
            text: current,
            placeholder,
        });
    }
    Ok(words)
}

/// One shell word, and the first `<placeholder>` found in it, if any.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Word {
    pub(super) text: String,
    pub(super) placeholder: Option<String>,
}

fn unclosed(rest: &str, quote: char) -> StressError {
    let token: String = rest.chars().take(60).collect();
    let token = if rest.chars().nth(60).is_some() {
        format!("{token}...")
    } else {
        token
    };
    StressError::new(
        &token,
        format!(
            "unclosed quote {quote} at `{}`: add the matching {quote}",
            show(&token)
        ),
    )
}

/// c-s `repairParams`: join with spaces, drop whitespace before `,=()` and
/// after `,=(`, split on whitespace.
pub(super) fn repair_params(words: &[String]) -> Vec<String> {
    let joined = words.join(" ");
    let mut out = String::with_capacity(joined.len());
    let mut chars = joined.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            let next = chars.peek().copied();
            let prev = out.chars().last();
            let glue = matches!(next, Some(',' | '=' | '(' | ')'))
                || matches!(prev, Some(',' | '=' | '('));
            if !glue && next.is_some() && prev.is_some() {
                out.push(' ');
            }
        } else {
            out.push(c);
        }
    }
    out.split(' ')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(command: &str) -> Vec<String> {
        shell_words(command)
            .unwrap()
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    #[test]
    fn quotes_group_words() {
        assert_eq!(texts("a 'b c' \"d e\" f"), vec!["a", "b c", "d e", "f"]);
        assert_eq!(texts("x='1 2'y"), vec!["x=1 2y"]);
        assert_eq!(texts(r#"a\ b "c\"d" 'e\f'"#), vec!["a b", "c\"d", "e\\f"]);
        assert_eq!(texts("a \\\n b"), vec!["a", "b"]);
        assert_eq!(texts("  "), Vec::<String>::new());
        assert_eq!(texts("''"), vec![""]);
        assert!(shell_words("a 'b").is_err());
        assert!(shell_words("a \"b").is_err());
        assert!(shell_words("a b\\").is_err());
    }

    #[test]
    fn placeholders_stay_whole() {
        let words = shell_words("-rate threads=200 limit=<per-process rate> x").unwrap();
        assert_eq!(words[2].text, "limit=<per-process rate>");
        assert_eq!(words[2].placeholder.as_deref(), Some("<per-process rate>"));
        assert_eq!(words[3].text, "x");
        // c-s's own < and > forms are not placeholders.
        let words = shell_words("read err<0.02 n>30 n<200 -rate threads<=8").unwrap();
        assert!(words.iter().all(|w| w.placeholder.is_none()));
        assert_eq!(words.len(), 6);
    }

    #[test]
    fn repair_joins_like_c_s() {
        let words: Vec<String> = [
            "mixed",
            "ratio(write=1,",
            "read=1)",
            "-rate",
            "threads=150 limit=20000/s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            repair_params(&words),
            vec![
                "mixed",
                "ratio(write=1,read=1)",
                "-rate",
                "threads=150",
                "limit=20000/s"
            ]
        );
        let words = vec![
            "cl =".to_string(),
            "QUORUM".to_string(),
            "x ) y".to_string(),
        ];
        assert_eq!(repair_params(&words), vec!["cl=QUORUM", "x)", "y"]);
    }
}
