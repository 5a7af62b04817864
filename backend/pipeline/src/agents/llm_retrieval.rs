//! The LLM retriever: the `retrieval` prompt with the graph schema and a one-shot example;
//! the Cypher of the reply is run by our executor ([`crate::retrieval::run_query`]).

use serenqa_graph::Graph;
use serenqa_shared::api::Understood;

use super::llm_explore::render_or_issue;
use super::traits::{Retrieval, Retriever};
use crate::llm::{BoxFuture, Role, RoleModel};
use crate::retrieval::{extract_cypher, run_query, schema_text, Retrieved};

/// A model writing Cypher.
#[derive(Clone)]
pub struct LlmRetriever {
    pub model: RoleModel,
}

impl LlmRetriever {
    async fn ask(&self, g: &Graph, question: &str, example: &str) -> Retrieval {
        let (labels, relationships) = schema_text(g);
        let prompt = render_or_issue(
            Role::Retrieval.template(),
            &[
                ("labels", labels),
                ("relationships", relationships),
                ("example", example.to_string()),
                ("question", question.to_string()),
            ],
        );
        let (mut t, truncated) = self.model.call(Role::Retrieval.as_str(), prompt).await;
        if truncated {
            t.issues.push("reply truncated (length limit)".into());
        }
        let r = match (&t.reply, &t.error) {
            (Some(reply), _) => {
                let c = extract_cypher(reply);
                if c.is_none() {
                    t.issues.push("no Cypher in reply".into());
                }
                run_query(g, c)
            }
            (None, e) => Retrieved {
                error: e.clone(),
                ..Default::default()
            },
        };
        (r, Some(t), Understood::default())
    }
}

impl Retriever for LlmRetriever {
    fn retrieve<'a>(
        &'a self,
        g: &'a Graph,
        question: &'a str,
        example: &'a str,
    ) -> BoxFuture<'a, Retrieval> {
        Box::pin(self.ask(g, question, example))
    }

    fn model(&self) -> Option<&str> {
        Some(&self.model.name)
    }
}
