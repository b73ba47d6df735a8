// An eslint rule for the layers of eslint.config.js, by folder (no plugin dependency): each folder
// imports only itself and the folders its layer allows; a pure-core file imports only pure-core
// files and no I/O module — so, file by file, no I/O is reachable from the pure core at all.
import { dirname, join, normalize, relative, sep } from 'node:path';

const posix = (p) => p.split(sep).join('/');

/** The folder (a key of `layers`) a repository path belongs to: the longest that contains it. */
function layerOf(layers, path) {
  let best;
  for (const folder of Object.keys(layers))
    if ((path === folder || path.startsWith(folder + '/')) && (!best || folder.length > best.length))
      best = folder;
  return best;
}

/** Whether a repository path is pure core: in a pure folder and not named as its shell, or named pure. */
function isPure(pure, path) {
  if (pure.files.includes(path)) return true;
  for (const [folder, shell] of Object.entries(pure.folders))
    if (path.startsWith(folder + '/')) return !shell.includes(path.slice(folder.length + 1));
  return false;
}

export const layersRule = {
  meta: {
    type: 'problem',
    docs: { description: 'Imports follow the layers by folder, and the pure core reaches no I/O.' },
    schema: [{ type: 'object' }],
  },
  create(context) {
    const { layers, pure } = context.options[0];
    const root = context.cwd;
    const file = posix(relative(root, context.filename));
    const layer = layerOf(layers, file);
    if (!layer) return {};
    const pureHere = isPure(pure, file);
    const check = (node, spec) => {
      if (typeof spec !== 'string') return;
      if (spec.startsWith('.')) {
        const target = posix(normalize(join(dirname(file), spec))).replace(/\.js$/, '.ts');
        const to = layerOf(layers, target) ?? target.split('/')[0];
        if (to !== layer && !layers[layer].includes(to))
          context.report({
            node,
            message: `${layer}/ may not import ${to}/ (allowed: ${layers[layer].join(', ') || 'nothing else'}; eslint.config.js LAYERS).`,
          });
        else if (pureHere && !isPure(pure, target))
          context.report({
            node,
            message: `The pure core (${file}) never imports the shell (${target}): timers, I/O, the API server, logging.`,
          });
      } else if (pureHere && pure.io.some((m) => spec === m || spec.startsWith(m + '/')))
        context.report({ node, message: `The pure core (${file}) does no I/O: ${spec}.` });
    };
    const withSource = (node) => check(node.source ?? node, node.source?.value);
    return {
      ImportDeclaration: withSource,
      ExportNamedDeclaration: (node) => node.source && withSource(node),
      ExportAllDeclaration: withSource,
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
