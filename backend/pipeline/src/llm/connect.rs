//! Which client serves a models file: [`connect`], the one place that decides.

use std::sync::Arc;

use super::chat::ChatModel;
use super::client::LlmClient;
use super::models::ModelsFile;

/// The one place a models file becomes a model client (`None` when it names no model: the
/// offline agents play). Every model is served by the OpenAI-compatible [`LlmClient`];
/// a provider that is not OpenAI-compatible is chosen here, by its [`super::ModelSpec`].
pub fn connect(
    file: &ModelsFile,
    cache: Option<std::path::PathBuf>,
) -> Result<Option<Arc<dyn ChatModel>>, String> {
    if file.models.is_empty() {
        return Ok(None);
    }
    Ok(Some(Arc::new(LlmClient::new(file, cache)?)))
}
