//! What a request asks for: the method and upstream model its `model` names
//! (`cot-sc@gpt-4o-mini`, a profile of the config's `[serve.profiles]`, or a model name
//! alone for io), and the method's parameters from its `thoughtscope` object, read and
//! checked by the methods' own declarations (as flags and `[defaults]` are).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::openai::{ApiError, ChatRequest};
use crate::config::params::or_list;
use crate::config::ParamPatch;
use crate::engine::{methods, MethodKind, Params};

/// Keys of the `thoughtscope` object that are not method parameters.
pub const RESERVED: &[&str] = &["task"];

/// A named set of a method and its parameters (`[serve.profiles.NAME]`), chosen by
/// `NAME@model`.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub method: MethodKind,
    /// Parameters and `task`, as a request's `thoughtscope` object writes them.
    pub values: Map<String, Value>,
}

/// The method, the upstream model and the profile a request's `model` names.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub method: MethodKind,
    /// Empty: the served model (`--model`).
    pub upstream: String,
    pub profile: Option<String>,
}

/// Read `model`: `PREFIX@MODEL` (a profile, else a method), or a model name alone (io).
pub fn route(model: &str, profiles: &BTreeMap<String, Profile>) -> Result<Route, ApiError> {
    let Some((prefix, upstream)) = model.split_once('@') else {
        return Ok(Route {
            method: crate::engine::methods::io::KIND,
            upstream: model.trim().to_string(),
            profile: None,
        });
    };
    let (prefix, upstream) = (prefix.trim(), upstream.trim().to_string());
    if let Some(p) = profiles.get(prefix) {
        return Ok(Route { method: p.method, upstream, profile: Some(prefix.to_string()) });
    }
    match MethodKind::from_name(prefix) {
        Some(method) => Ok(Route { method, upstream, profile: None }),
        None => {
            let mut known: Vec<&str> = methods::names();
            known.extend(profiles.keys().map(String::as_str));
            Err(ApiError::new(
                404,
                "invalid_request_error",
                "model_not_found",
                format!(
                    "{} in model {} is no method or profile (known: {}); write method@model",
                    super::openai::echo(prefix),
                    super::openai::echo(model),
                    known.join(", ")
                ),
            ))
        }
    }
}

/// The parameters of `method`: the request's `thoughtscope` values over the profile's,
/// over the config's `[defaults]`, over the method's defaults; the top-level
/// `temperature` and `seed` where the object does not name them. Each is checked by its
/// declaration; a parameter the method does not read is refused, naming those that do.
pub fn params(
    method: MethodKind,
    request: &ChatRequest,
    profile: Option<&Profile>,
    defaults: &ParamPatch,
) -> Result<Params, ApiError> {
    let mut patch = ParamPatch::of(method);
    let from_profile = profile.map(|p| &p.values);
    for object in from_profile.into_iter().chain(std::iter::once(&request.thoughtscope)) {
        for (name, value) in object {
            if RESERVED.contains(&name.as_str()) {
                continue;
            }
            let Some(shared) = methods::all_params().into_iter().find(|p| p.decl.name == name) else {
                let reads: Vec<&str> = method.info().declared().iter().map(|d| d.name).collect();
                return Err(ApiError::invalid(
                    "unknown_parameter",
                    format!("thoughtscope.{name} is no parameter of any method ({method} reads {})", reads.join(", ")),
                ));
            };
            patch = patch.with(name, shared.decl.from_json(value));
        }
    }
    let top: [(&str, Option<crate::engine::Value>); 2] =
        [("temperature", request.temperature.map(Into::into)), ("seed", request.seed.map(Into::into))];
    for (name, value) in top {
        if let Some(value) = value.filter(|_| patch.get(name).is_none()) {
            patch = patch.with(name, value);
        }
    }
    // io is the model: one completion a request, as a direct call would be, unless the
    // client (its `n` or `thoughtscope` object), the profile or the config asks for more.
    let io = method == crate::engine::methods::io::KIND;
    if request.n > 1 {
        let n = crate::engine::Value::Whole(u64::from(request.n));
        if !io {
            return Err(ApiError::invalid(
                "unsupported_n",
                format!("n must be 1 for {method}: a search gives one answer (n is for io, a bare model name)"),
            ));
        }
        if patch.get("samples").is_some_and(|s| *s != n) {
            return Err(ApiError::invalid("invalid_n", "n and thoughtscope.samples differ: send one of them"));
        }
        patch = patch.with("samples", n);
    } else if io && patch.get("samples").is_none() && defaults.get("samples").is_none() {
        patch = patch.with("samples", crate::engine::Value::Whole(1));
    }
    if let Some((name, readers)) = patch.not_read_by(method) {
        return Err(ApiError::invalid(
            "unknown_parameter",
            format!("thoughtscope.{name} is for method {} (the method is {method})", or_list(&readers)),
        ));
    }
    ParamPatch::resolve(&patch, defaults)
        .map_err(|e| ApiError::invalid("invalid_parameter", format!("thoughtscope: {e}")))
}

/// The task a request names (`thoughtscope.task`, else the profile's), if it names one.
pub fn task_named(request: &ChatRequest, profile: Option<&Profile>) -> Result<Option<String>, ApiError> {
    let named = request.thoughtscope.get("task").or_else(|| profile.and_then(|p| p.values.get("task")));
    match named {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(name)) if !name.trim().is_empty() => Ok(Some(name.trim().to_string())),
        Some(_) => Err(ApiError::invalid("invalid_task", "thoughtscope.task must be a task's name")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Value as P;
    use serde_json::json;

    fn request(thoughtscope: Value) -> ChatRequest {
        let body = json!({"model": "x", "messages": [{"role": "user", "content": "q"}], "thoughtscope": thoughtscope,
            "temperature": 0.3});
        ChatRequest::parse(body.to_string().as_bytes()).unwrap()
    }

    #[test]
    fn io_is_one_completion_unless_the_client_the_profile_or_the_config_asks_for_more() {
        let io = crate::engine::methods::io::KIND;
        let none = ParamPatch::default();
        let p = params(io, &request(json!({})), None, &none).unwrap();
        assert_eq!(p.get("samples"), Some(&P::Whole(1)), "a bare model name is one completion");
        let p = params(io, &request(json!({"samples": 4})), None, &none).unwrap();
        assert_eq!(p.get("samples"), Some(&P::Whole(4)));
        let profile = Profile { method: io, values: json!({"samples": 3}).as_object().unwrap().clone() };
        assert_eq!(params(io, &request(json!({})), Some(&profile), &none).unwrap().get("samples"), Some(&P::Whole(3)));
        let config = ParamPatch::default().with("samples", P::Whole(5));
        assert_eq!(params(io, &request(json!({})), None, &config).unwrap().get("samples"), Some(&P::Whole(5)));
        // Another method keeps its own default.
        let cot_sc = MethodKind::from_name("cot-sc").unwrap();
        assert_ne!(params(cot_sc, &request(json!({})), None, &none).unwrap().get("samples"), Some(&P::Whole(1)));
    }

    #[test]
    fn the_model_names_the_method_and_the_upstream_model() {
        let none = BTreeMap::new();
        let r = route("cot-sc@gpt-4o-mini", &none).unwrap();
        assert_eq!((r.method.label(), r.upstream.as_str()), ("cot-sc", "gpt-4o-mini"));
        assert_eq!(route("tot-bfs@", &none).unwrap().upstream, "", "the served model");
        let plain = route("llama3", &none).unwrap();
        assert_eq!((plain.method.label(), plain.upstream.as_str()), ("io", "llama3"));
        let e = route("wizardry@m", &none).unwrap_err();
        assert_eq!((e.status, e.code), (404, "model_not_found"));
        assert!(e.message.contains("cot-sc"), "{}", e.message);
        let mut profiles = BTreeMap::new();
        let values = json!({"samples": 3}).as_object().unwrap().clone();
        profiles.insert("careful".to_string(), Profile { method: MethodKind::from_name("cot-sc").unwrap(), values });
        let r = route("careful@m", &profiles).unwrap();
        assert_eq!((r.method.label(), r.profile.as_deref()), ("cot-sc", Some("careful")));
    }

    #[test]
    fn parameters_come_from_the_object_checked_by_the_methods_declarations() {
        let cot_sc = MethodKind::from_name("cot-sc").unwrap();
        let p =
            params(cot_sc, &request(json!({"samples": 5, "task": "game24"})), None, &ParamPatch::default()).unwrap();
        assert_eq!(p.get("samples"), Some(&P::Whole(5)));
        assert_eq!(p.get("temperature"), Some(&P::Real(0.3)), "the top-level temperature");
        let e = params(cot_sc, &request(json!({"samples": 0})), None, &ParamPatch::default()).unwrap_err();
        assert_eq!(e.code, "invalid_parameter");
        assert!(e.message.contains("samples"), "{}", e.message);
        let e = params(cot_sc, &request(json!({"breadth": 2})), None, &ParamPatch::default()).unwrap_err();
        assert!(e.message.contains("breadth is for method"), "{}", e.message);
        let e = params(cot_sc, &request(json!({"bogus": 2})), None, &ParamPatch::default()).unwrap_err();
        assert_eq!(e.code, "unknown_parameter");
        let profile =
            Profile { method: cot_sc, values: json!({"samples": 7, "task": "game24"}).as_object().unwrap().clone() };
        let p = params(cot_sc, &request(json!({})), Some(&profile), &ParamPatch::default()).unwrap();
        assert_eq!(p.get("samples"), Some(&P::Whole(7)));
        let p = params(cot_sc, &request(json!({"samples": 2})), Some(&profile), &ParamPatch::default()).unwrap();
        assert_eq!(p.get("samples"), Some(&P::Whole(2)), "the request over its profile");
        assert_eq!(task_named(&request(json!({})), Some(&profile)).unwrap().as_deref(), Some("game24"));
    }
}
