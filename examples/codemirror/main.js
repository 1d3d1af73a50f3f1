// The example page's editor: a deploy request in CodeMirror, checked by
// gco-spec as you type. Bundle it (see index.html) with any bundler.
import { EditorState } from '@codemirror/state';
import { EditorView, lineNumbers } from '@codemirror/view';
import { json } from '@codemirror/lang-json';
import { lintGutter } from '@codemirror/lint';
import init from 'gco-spec';
import { gcoSpecLinter } from './lint.js';

const REQUEST = `{
  "endpoint_name": "chat-pd",
  "image": "vllm/vllm-openai:v0.11.0",
  "mooncake": {
    "mode": "disaggregated",
    "topology": {"prefill": 0, "decode": 2},
    "colour": "蓝😀"
  }
}
`;

// The package's wasm, from the repository's build (core/pkg/web); a bundler
// that handles `new URL(..., import.meta.url)` finds it by itself.
await init({ module_or_path: new URL('../../core/pkg/web/gco_spec_bg.wasm', import.meta.url) });

window.editor = new EditorView({
  parent: document.getElementById('editor'),
  state: EditorState.create({
    doc: REQUEST,
    extensions: [lineNumbers(), json(), lintGutter(), gcoSpecLinter()],
  }),
});
