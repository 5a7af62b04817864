//! Readable phrases for relations read from either end ("treats" / "is treated by").

/// The phrase for reading a relation from its target's side.
pub fn passive(verb: &str) -> String {
    let v = verb.trim();
    let special = match v {
        "resembles" | "interacts" | "covaries" | "interacts with" => return v.to_string(),
        "participates" | "participates in" => "has participant",
        "includes" => "is included in",
        "associates" | "associates with" | "associated with" => "is associated with",
        "localizes" | "localizes to" => "has localized",
        "presents" => "is presented by",
        "expresses" => "is expressed in",
        "binds" => "is bound by",
        "palliates" => "is palliated by",
        "treats" => "is treated by",
        "causes" => "is caused by",
        "regulates" => "is regulated by",
        "upregulates" => "is upregulated by",
        "downregulates" => "is downregulated by",
        _ => "",
    };
    if !special.is_empty() {
        return special.to_string();
    }
    // Generic: "acts on" -> "is acted on by"; "targets" -> "is targeted by".
    let mut words = v.split_whitespace();
    let first = words.next().unwrap_or("");
    let rest: Vec<&str> = words.collect();
    let participle = if let Some(stem) = first.strip_suffix("ies") {
        format!("{stem}ied")
    } else if let Some(stem) = first
        .strip_suffix("es")
        .filter(|s| s.ends_with('s') || s.ends_with("sh") || s.ends_with("ch") || s.ends_with('x'))
    {
        format!("{stem}ed")
    } else if let Some(stem) = first.strip_suffix('s') {
        if stem.ends_with('e') {
            format!("{stem}d")
        } else {
            format!("{stem}ed")
        }
    } else {
        return format!("is {v} of");
    };
    let mut s = format!("is {participle}");
    for w in rest {
        s.push(' ');
        s.push_str(w);
    }
    s.push_str(" by");
    s
}

#[cfg(test)]
mod tests {
    use super::passive;

    #[test]
    fn passive_phrases() {
        assert_eq!(passive("treats"), "is treated by");
        assert_eq!(passive("resembles"), "resembles");
        assert_eq!(passive("acts on"), "is acted on by");
        assert_eq!(passive("targets"), "is targeted by");
        assert_eq!(
            passive("annotated in pathway"),
            "is annotated in pathway of"
        );
    }
}
