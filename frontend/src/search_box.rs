//! Autocomplete: type a few letters of a disease or drug name, pick with mouse or keyboard
//! (↑/↓ to move, Enter to open, Escape to close).

use leptos::prelude::*;
use leptos::task::spawn_local;
use serenqa_shared::api::NodeView;

use crate::api;

#[component]
pub fn SearchBox(
    /// Called with the chosen node.
    on_pick: Callback<NodeView>,
    /// Restrict suggestions to one node type (display name), if set.
    #[prop(into)]
    kind: Signal<Option<String>>,
    #[prop(into, optional)] placeholder: Option<String>,
) -> impl IntoView {
    let (text, set_text) = signal(String::new());
    let (hits, set_hits) = signal(Vec::<NodeView>::new());
    let (active, set_active) = signal(None::<usize>);
    let (error, set_error) = signal(None::<String>);
    let (open, set_open) = signal(false);
    // Only the reply to the latest keystroke may update the list.
    let generation = StoredValue::new(0u64);

    let fetch = move |q: String| {
        generation.update_value(|g| *g += 1);
        let mine = generation.get_value();
        if q.trim().len() < 2 {
            set_hits.set(Vec::new());
            set_open.set(false);
            return;
        }
        let kind = kind.get_untracked();
        spawn_local(async move {
            let result = api::search(q.trim(), kind.as_deref()).await;
            if generation.get_value() != mine {
                return;
            }
            match result {
                Ok(h) => {
                    set_error.set(None);
                    set_open.set(true);
                    set_active.set(if h.is_empty() { None } else { Some(0) });
                    set_hits.set(h);
                }
                Err(e) => set_error.set(Some(e)),
            }
        });
    };

    let pick = move |n: NodeView| {
        set_open.set(false);
        set_text.set(n.name.clone());
        on_pick.run(n);
    };

    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let len = hits.with(Vec::len);
        match ev.key().as_str() {
            "ArrowDown" if len > 0 => {
                ev.prevent_default();
                set_open.set(true);
                set_active.update(|a| *a = Some(a.map_or(0, |i| (i + 1) % len)));
            }
            "ArrowUp" if len > 0 => {
                ev.prevent_default();
                set_active.update(|a| *a = Some(a.map_or(len - 1, |i| (i + len - 1) % len)));
            }
            "Enter" => {
                if let Some(n) = active.get().and_then(|i| hits.with(|h| h.get(i).cloned())) {
                    ev.prevent_default();
                    pick(n);
                }
            }
            "Escape" => set_open.set(false),
            _ => {}
        }
    };

    let placeholder = placeholder.unwrap_or_else(|| "Search a disease or a drug…".to_string());
    view! {
        <div class="search">
            <input
                type="search"
                role="combobox"
                aria-label="Search a disease or a drug"
                aria-autocomplete="list"
                aria-controls="search-list"
                aria-expanded=move || open.get().to_string()
                placeholder=placeholder
                autocomplete="off"
                data-testid="search-input"
                prop:value=move || text.get()
                on:input=move |ev| {
                    let v = event_target_value(&ev);
                    set_text.set(v.clone());
                    fetch(v);
                }
                on:keydown=on_key
            />
            {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
            <Show when=move || open.get()>
                <ul id="search-list" class="suggestions" role="listbox" data-testid="suggestions">
                    {move || {
                        let list = hits.get();
                        if list.is_empty() {
                            return view! { <li class="muted">"No match"</li> }.into_any();
                        }
                        list.into_iter()
                            .enumerate()
                            .map(|(i, n)| {
                                let n2 = n.clone();
                                view! {
                                    <li
                                        role="option"
                                        class:active=move || active.get() == Some(i)
                                        aria-selected=move || (active.get() == Some(i)).to_string()
                                        on:mousedown=move |ev| {
                                            ev.prevent_default();
                                            pick(n2.clone());
                                        }
                                    >
                                        <span class="kind-dot" style=format!("background:{}", crate::kind_colour(&n.kind))></span>
                                        {n.name.clone()}
                                        <span class="muted">" · " {n.kind.clone()} " " {n.id.clone()}</span>
                                    </li>
                                }
                            })
                            .collect_view()
                            .into_any()
                    }}
                </ul>
            </Show>
        </div>
    }
}
