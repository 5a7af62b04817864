//! Scalar functions and binary operators on [`Value`]s (null in, null out, unless stated).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::error::{CypherError, Result};
use crate::plan::BinOp;
use crate::store::Store;
use crate::value::{as_f64, format_float as float_str, Value};

/// What scalar functions need from the running query (implemented by the executor's
/// context): the store, the budget check made before a large value is built, and the
/// per-query regular-expression cache.
pub trait Env {
    fn store(&self) -> &dyn Store;
    /// The properties of a node, relationship or map.
    fn all_props(&self, v: &Value) -> Result<BTreeMap<String, Value>>;
    /// Checks, before allocating, that a value of `bytes` may be built.
    fn precheck(&self, bytes: u64) -> Result<()>;
    /// `pattern` compiled as a whole-string match.
    fn regex(&self, pattern: &str) -> Result<regex::Regex>;
}

/// Inline size of one value (what a list element costs before its own heap).
const VALUE_INLINE: u64 = std::mem::size_of::<Value>() as u64;

fn type_err(msg: impl Into<String>) -> CypherError {
    CypherError::runtime("InvalidArgumentType", msg)
}

/// Checks that `name` exists and accepts `argc` arguments.
pub fn arity(name: &str, argc: usize) -> Result<bool> {
    let (lo, hi) = match name {
        "tolower" | "toupper" | "id" | "labels" | "type" | "size" | "length" | "tostring"
        | "tointeger" | "tofloat" | "toboolean" | "keys" | "properties" | "head" | "last"
        | "tail" | "nodes" | "relationships" | "startnode" | "endnode" | "abs" | "sign"
        | "ceil" | "floor" | "sqrt" | "exp" | "log" | "log10" | "sin" | "cos" | "tan"
        | "reverse" | "trim" | "ltrim" | "rtrim" | "isempty" | "elementid" | "tostringornull"
        | "tointegerornull" | "tofloatornull" | "tobooleanornull" | "round" => {
            (1, if name == "round" { 3 } else { 1 })
        }
        "coalesce" => (1, usize::MAX),
        "range" => (2, 3),
        "substring" => (2, 3),
        "left" | "right" | "split" => (2, 2),
        "replace" => (3, 3),
        "pi" | "e" | "rand" => (0, 0),
        _ => return Ok(false),
    };
    if argc < lo || argc > hi {
        return Err(CypherError::semantic(
            "InvalidNumberOfArguments",
            format!("wrong number of arguments to `{name}`"),
        ));
    }
    Ok(true)
}

fn int_arg(v: &Value, what: &str) -> Result<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Float(f) if f.fract() == 0.0 => Ok(*f as i64),
        other => Err(type_err(format!(
            "{what} must be an integer, got {}",
            other.type_name()
        ))),
    }
}

/// `range(start, end[, step])` as (start, step, element count), with Cypher's argument
/// checks; shared by the function and by `UNWIND range(…)`, which streams it.
pub(crate) fn range_spec(args: &[Value]) -> Result<(i128, i128, u128)> {
    let strict = |v: Option<&Value>, what: &str| match v {
        Some(Value::Int(i)) => Ok(*i),
        Some(other) => Err(CypherError::runtime(
            "InvalidArgumentType",
            format!("{what} must be an integer, got {}", other.type_name()),
        )),
        None => Err(CypherError::runtime(
            "InvalidArgumentType",
            format!("{what} is missing"),
        )),
    };
    let a = strict(args.first(), "range start")?;
    let b = strict(args.get(1), "range end")?;
    let step = match args.get(2) {
        Some(v) => strict(Some(v), "range step")?,
        None => 1,
    };
    if step == 0 {
        return Err(CypherError::runtime(
            "NumberOutOfRange",
            "range() step must not be zero",
        ));
    }
    let count = if (step > 0 && a > b) || (step < 0 && a < b) {
        0
    } else {
        ((b as i128 - a as i128) / step as i128 + 1) as u128
    };
    Ok((a as i128, step as i128, count))
}

pub fn call(ctx: &dyn Env, name: &str, args: Vec<Value>) -> Result<Value> {
    let a0 = args.first().cloned().unwrap_or(Value::Null);
    if name == "coalesce" {
        return Ok(args
            .into_iter()
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null));
    }
    match name {
        "pi" => return Ok(Value::Float(std::f64::consts::PI)),
        "e" => return Ok(Value::Float(std::f64::consts::E)),
        "rand" => return Ok(Value::Float(0.5)),
        _ => {}
    }
    if a0.is_null()
        && !matches!(
            name,
            "tostringornull" | "tointegerornull" | "tofloatornull" | "tobooleanornull"
        )
    {
        return Ok(Value::Null);
    }
    let store = ctx.store();
    Ok(match name {
        "tolower" | "toupper" => match a0 {
            Value::Str(s) => Value::Str(if name == "tolower" {
                s.to_lowercase()
            } else {
                s.to_uppercase()
            }),
            other => {
                return Err(type_err(format!(
                    "{name}() needs a string, got {}",
                    other.type_name()
                )))
            }
        },
        "id" | "elementid" => match a0 {
            Value::Node(n) => Value::Int(i64::from(n)),
            Value::Rel(r) => Value::Int(r.id as i64),
            other => {
                return Err(type_err(format!(
                    "id() needs a node or relationship, got {}",
                    other.type_name()
                )))
            }
        },
        "labels" => match a0 {
            Value::Node(n) => {
                let mut ls: Vec<String> = store
                    .node_labels(n)
                    .into_iter()
                    .map(|l| store.label_name(l).to_string())
                    .collect();
                ls.sort();
                Value::List(ls.into_iter().map(Value::Str).collect())
            }
            other => {
                return Err(type_err(format!(
                    "labels() needs a node, got {}",
                    other.type_name()
                )))
            }
        },
        "type" => match a0 {
            Value::Rel(r) => Value::Str(store.rel_type_name(r.ty).to_string()),
            other => {
                return Err(type_err(format!(
                    "type() needs a relationship, got {}",
                    other.type_name()
                )))
            }
        },
        "size" => match a0 {
            Value::List(xs) => Value::Int(xs.len() as i64),
            Value::Str(s) => Value::Int(s.chars().count() as i64),
            Value::Map(m) => Value::Int(m.len() as i64),
            other => {
                return Err(type_err(format!(
                    "size() needs a list or string, got {}",
                    other.type_name()
                )))
            }
        },
        "length" => match a0 {
            Value::Path(p) => Value::Int(p.rels.len() as i64),
            Value::Str(s) => Value::Int(s.chars().count() as i64),
            Value::List(xs) => Value::Int(xs.len() as i64),
            other => {
                return Err(type_err(format!(
                    "length() needs a path, got {}",
                    other.type_name()
                )))
            }
        },
        "isempty" => match a0 {
            Value::List(xs) => Value::Bool(xs.is_empty()),
            Value::Str(s) => Value::Bool(s.is_empty()),
            Value::Map(m) => Value::Bool(m.is_empty()),
            other => {
                return Err(type_err(format!(
                    "isEmpty() needs a list, string or map, got {}",
                    other.type_name()
                )))
            }
        },
        "tostring" | "tostringornull" => match a0 {
            Value::Str(s) => Value::Str(s),
            Value::Int(i) => Value::Str(i.to_string()),
            Value::Float(f) => Value::Str(float_str(f)),
            Value::Bool(b) => Value::Str(b.to_string()),
            Value::Null => Value::Null,
            other if name == "tostringornull" => {
                let _ = other;
                Value::Null
            }
            other => {
                return Err(type_err(format!(
                    "toString() cannot convert a {}",
                    other.type_name()
                )))
            }
        },
        "tointeger" | "tointegerornull" => match a0 {
            Value::Int(i) => Value::Int(i),
            Value::Float(f) => {
                if f.is_finite() && f.abs() < 9.3e18 {
                    Value::Int(f.trunc() as i64)
                } else {
                    Value::Null
                }
            }
            Value::Str(s) => {
                let t = s.trim();
                match t.parse::<i64>() {
                    Ok(i) => Value::Int(i),
                    Err(_) => match t.parse::<f64>() {
                        Ok(f) if f.is_finite() => Value::Int(f.trunc() as i64),
                        _ => Value::Null,
                    },
                }
            }
            Value::Bool(b) => Value::Int(i64::from(b)),
            Value::Null => Value::Null,
            _ if name == "tointegerornull" => Value::Null,
            other => {
                return Err(type_err(format!(
                    "toInteger() cannot convert a {}",
                    other.type_name()
                )))
            }
        },
        "tofloat" | "tofloatornull" => match a0 {
            Value::Int(i) => Value::Float(i as f64),
            Value::Float(f) => Value::Float(f),
            Value::Str(s) => s
                .trim()
                .parse::<f64>()
                .map(Value::Float)
                .unwrap_or(Value::Null),
            Value::Null => Value::Null,
            _ if name == "tofloatornull" => Value::Null,
            other => {
                return Err(type_err(format!(
                    "toFloat() cannot convert a {}",
                    other.type_name()
                )))
            }
        },
        "toboolean" | "tobooleanornull" => match a0 {
            Value::Bool(b) => Value::Bool(b),
            Value::Str(s) => match s.trim().to_lowercase().as_str() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => Value::Null,
            },
            Value::Int(i) => Value::Bool(i != 0),
            Value::Null => Value::Null,
            _ if name == "tobooleanornull" => Value::Null,
            other => {
                return Err(type_err(format!(
                    "toBoolean() cannot convert a {}",
                    other.type_name()
                )))
            }
        },
        "keys" => match &a0 {
            Value::Node(_) | Value::Rel(_) | Value::Map(_) => {
                Value::List(ctx.all_props(&a0)?.into_keys().map(Value::Str).collect())
            }
            other => {
                return Err(type_err(format!(
                    "keys() needs a node, relationship or map, got {}",
                    other.type_name()
                )))
            }
        },
        "properties" => match &a0 {
            Value::Node(_) | Value::Rel(_) | Value::Map(_) => Value::Map(ctx.all_props(&a0)?),
            other => {
                return Err(type_err(format!(
                    "properties() needs a node, relationship or map, got {}",
                    other.type_name()
                )))
            }
        },
        "head" | "last" | "tail" => match a0 {
            Value::List(mut xs) => match name {
                "head" => xs.into_iter().next().unwrap_or(Value::Null),
                "last" => xs.pop().unwrap_or(Value::Null),
                _ => Value::List(xs.into_iter().skip(1).collect()),
            },
            other => {
                return Err(type_err(format!(
                    "{name}() needs a list, got {}",
                    other.type_name()
                )))
            }
        },
        "nodes" => match a0 {
            Value::Path(p) => Value::List(p.nodes.into_iter().map(Value::Node).collect()),
            other => {
                return Err(type_err(format!(
                    "nodes() needs a path, got {}",
                    other.type_name()
                )))
            }
        },
        "relationships" => match a0 {
            Value::Path(p) => Value::List(p.rels.into_iter().map(Value::Rel).collect()),
            other => {
                return Err(type_err(format!(
                    "relationships() needs a path, got {}",
                    other.type_name()
                )))
            }
        },
        "startnode" | "endnode" => match a0 {
            Value::Rel(r) => Value::Node(if name == "startnode" { r.src } else { r.dst }),
            other => {
                return Err(type_err(format!(
                    "{name}() needs a relationship, got {}",
                    other.type_name()
                )))
            }
        },
        "abs" => match a0 {
            Value::Int(i) => Value::Int(
                i.checked_abs()
                    .ok_or_else(|| CypherError::runtime("IntegerOverflow", "integer overflow"))?,
            ),
            Value::Float(f) => Value::Float(f.abs()),
            other => {
                return Err(type_err(format!(
                    "abs() needs a number, got {}",
                    other.type_name()
                )))
            }
        },
        "sign" => match a0 {
            Value::Int(i) => Value::Int(i.signum()),
            Value::Float(f) => Value::Int(if f > 0.0 {
                1
            } else if f < 0.0 {
                -1
            } else {
                0
            }),
            other => {
                return Err(type_err(format!(
                    "sign() needs a number, got {}",
                    other.type_name()
                )))
            }
        },
        "ceil" | "floor" | "sqrt" | "exp" | "log" | "log10" | "sin" | "cos" | "tan" | "round" => {
            if !matches!(a0, Value::Int(_) | Value::Float(_)) {
                return Err(type_err(format!(
                    "{name}() needs a number, got {}",
                    a0.type_name()
                )));
            }
            let x = as_f64(&a0);
            Value::Float(match name {
                "ceil" => x.ceil(),
                "floor" => x.floor(),
                "sqrt" => x.sqrt(),
                "exp" => x.exp(),
                "log" => x.ln(),
                "log10" => x.log10(),
                "sin" => x.sin(),
                "cos" => x.cos(),
                "tan" => x.tan(),
                _ => {
                    let digits = match args.get(1) {
                        Some(v) => int_arg(v, "precision")?,
                        None => 0,
                    };
                    let m = 10f64.powi(digits.clamp(0, 300) as i32);
                    // Cypher rounds half up (towards positive infinity).
                    (x * m + 0.5).floor() / m
                }
            })
        }
        "reverse" => match a0 {
            Value::Str(s) => Value::Str(s.chars().rev().collect()),
            Value::List(mut xs) => {
                xs.reverse();
                Value::List(xs)
            }
            other => {
                return Err(type_err(format!(
                    "reverse() needs a string or list, got {}",
                    other.type_name()
                )))
            }
        },
        "trim" | "ltrim" | "rtrim" => match a0 {
            Value::Str(s) => Value::Str(match name {
                "trim" => s.trim().to_string(),
                "ltrim" => s.trim_start().to_string(),
                _ => s.trim_end().to_string(),
            }),
            other => {
                return Err(type_err(format!(
                    "{name}() needs a string, got {}",
                    other.type_name()
                )))
            }
        },
        "substring" | "left" | "right" => {
            let Value::Str(s) = a0 else {
                return Err(type_err(format!("{name}() needs a string")));
            };
            if args.iter().skip(1).any(Value::is_null) {
                return Ok(Value::Null);
            }
            let chars: Vec<char> = s.chars().collect();
            let n = chars.len() as i64;
            let (start, len) = match name {
                "substring" => (
                    int_arg(&args[1], "start")?,
                    match args.get(2) {
                        Some(v) => int_arg(v, "length")?,
                        None => n,
                    },
                ),
                "left" => (0, int_arg(&args[1], "length")?),
                _ => {
                    let l = int_arg(&args[1], "length")?;
                    (n - l.min(n), l)
                }
            };
            if start < 0 || len < 0 {
                return Err(CypherError::runtime(
                    "NegativeIntegerArgument",
                    format!("{name}() needs non-negative arguments"),
                ));
            }
            let a = start.min(n) as usize;
            let z = (start.saturating_add(len)).min(n) as usize;
            Value::Str(chars[a..z.max(a)].iter().collect())
        }
        "split" => match (&a0, &args[1]) {
            (Value::Str(s), Value::Str(d)) => {
                // Each piece is a string of its own: check the count before building them.
                let pieces = if d.is_empty() {
                    s.chars().count() + 2
                } else {
                    s.matches(d.as_str()).count() + 1
                } as u64;
                ctx.precheck(pieces * VALUE_INLINE * 2 + s.len() as u64)?;
                Value::List(
                    s.split(d.as_str())
                        .map(|x| Value::Str(x.to_string()))
                        .collect(),
                )
            }
            (_, Value::Null) => Value::Null,
            _ => return Err(type_err("split() needs strings")),
        },
        "replace" => match (&a0, &args[1], &args[2]) {
            (Value::Str(s), Value::Str(f), Value::Str(t)) => {
                let hits = if f.is_empty() {
                    s.chars().count() + 1
                } else {
                    s.matches(f.as_str()).count()
                } as u64;
                ctx.precheck(
                    (s.len() as u64).saturating_add(hits.saturating_mul(t.len() as u64))
                        + VALUE_INLINE,
                )?;
                Value::Str(s.replace(f.as_str(), t))
            }
            (_, Value::Null, _) | (_, _, Value::Null) => Value::Null,
            _ => return Err(type_err("replace() needs strings")),
        },
        "range" => {
            let (start, step, count) = range_spec(&args)?;
            if count > 10_000_000 {
                return Err(CypherError::new(
                    crate::error::ErrorKind::Budget,
                    "value size: range() longer than 10,000,000 elements",
                ));
            }
            ctx.precheck((count as u64 + 1) * VALUE_INLINE)?;
            let mut v = Vec::with_capacity(count as usize);
            let mut x = start;
            for _ in 0..count {
                v.push(Value::Int(x as i64));
                x += step;
            }
            Value::List(v)
        }
        _ => {
            return Err(CypherError::semantic(
                "UnknownFunction",
                format!("unknown function `{name}`"),
            ))
        }
    })
}

fn overflow() -> CypherError {
    CypherError::runtime("IntegerOverflow", "integer overflow")
}

pub fn binary(ctx: &dyn Env, op: BinOp, l: Value, r: Value) -> Result<Value> {
    use Value::*;
    Ok(match op {
        BinOp::Eq => l.cypher_eq(&r).map_or(Null, Bool),
        BinOp::Ne => l.cypher_eq(&r).map_or(Null, |b| Bool(!b)),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => match l.cypher_cmp(&r) {
            // NaN is comparable with numbers, and every comparison with it is false.
            None if matches!((&l, &r), (Int(_) | Float(_), Int(_) | Float(_))) => Bool(false),
            None => Null,
            Some(o) => Bool(match op {
                BinOp::Lt => o == Ordering::Less,
                BinOp::Le => o != Ordering::Greater,
                BinOp::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            }),
        },
        BinOp::In => match r {
            Null => Null,
            List(xs) => {
                let mut unknown = false;
                for x in &xs {
                    match l.cypher_eq(x) {
                        Some(true) => return Ok(Bool(true)),
                        None => unknown = true,
                        Some(false) => {}
                    }
                }
                if unknown {
                    Null
                } else {
                    Bool(false)
                }
            }
            other => {
                return Err(type_err(format!(
                    "IN needs a list, got {}",
                    other.type_name()
                )))
            }
        },
        BinOp::StartsWith | BinOp::EndsWith | BinOp::Contains => match (&l, &r) {
            (Str(a), Str(b)) => Bool(match op {
                BinOp::StartsWith => a.starts_with(b.as_str()),
                BinOp::EndsWith => a.ends_with(b.as_str()),
                _ => a.contains(b.as_str()),
            }),
            _ => Null,
        },
        BinOp::Regex => match (&l, &r) {
            (Str(a), Str(p)) => Bool(ctx.regex(p)?.is_match(a)),
            _ => Null,
        },
        BinOp::Add => match (l, r) {
            (Null, _) | (_, Null) => Null,
            (Int(a), Int(b)) => Int(a.checked_add(b).ok_or_else(overflow)?),
            (a @ (Int(_) | Float(_)), b @ (Int(_) | Float(_))) => Float(as_f64(&a) + as_f64(&b)),
            (Str(a), Str(b)) => {
                ctx.precheck((a.len() + b.len()) as u64 + VALUE_INLINE)?;
                Str(a + &b)
            }
            (Str(a), Int(b)) => Str(format!("{a}{b}")),
            (Str(a), Float(b)) => Str(format!("{a}{}", float_str(b))),
            (Int(a), Str(b)) => Str(format!("{a}{b}")),
            (Float(a), Str(b)) => Str(format!("{}{b}", float_str(a))),
            (List(mut a), List(b)) => {
                ctx.precheck((a.len() + b.len() + 1) as u64 * VALUE_INLINE)?;
                a.extend(b);
                List(a)
            }
            (List(mut a), b) => {
                a.push(b);
                List(a)
            }
            (a, List(b)) => {
                let mut v = vec![a];
                v.extend(b);
                List(v)
            }
            (a, b) => {
                return Err(type_err(format!(
                    "cannot add {} and {}",
                    a.type_name(),
                    b.type_name()
                )))
            }
        },
        BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod | BinOp::Pow => match (l, r) {
            (Null, _) | (_, Null) => Null,
            (Int(a), Int(b)) if op != BinOp::Pow => match op {
                BinOp::Sub => Int(a.checked_sub(b).ok_or_else(overflow)?),
                BinOp::Mul => Int(a.checked_mul(b).ok_or_else(overflow)?),
                BinOp::Div => {
                    if b == 0 {
                        return Err(CypherError::runtime("DivisionByZero", "division by zero"));
                    }
                    Int(a.checked_div(b).ok_or_else(overflow)?)
                }
                _ => {
                    if b == 0 {
                        return Err(CypherError::runtime("DivisionByZero", "division by zero"));
                    }
                    Int(a.checked_rem(b).ok_or_else(overflow)?)
                }
            },
            (a @ (Int(_) | Float(_)), b @ (Int(_) | Float(_))) => {
                let (x, y) = (as_f64(&a), as_f64(&b));
                Float(match op {
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div => x / y,
                    BinOp::Mod => x % y,
                    _ => x.powf(y),
                })
            }
            (a, b) => {
                return Err(type_err(format!(
                    "cannot apply arithmetic to {} and {}",
                    a.type_name(),
                    b.type_name()
                )))
            }
        },
        BinOp::And | BinOp::Or | BinOp::Xor => return Err(type_err("boolean operator")),
    })
}
