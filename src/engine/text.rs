//! [`and_list`], the one way names are joined into a sentence (the engine's refusals and
//! the tasks' messages use it).

/// `a, b and c`: names in a sentence (the engine's refusals and the tasks' messages).
pub fn and_list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::and_list;

    #[test]
    fn and_list_joins_names_as_a_sentence() {
        assert_eq!(and_list(&[]), "");
        assert_eq!(and_list(&["a"]), "a");
        assert_eq!(and_list(&["a", "b"]), "a and b");
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    }
}
