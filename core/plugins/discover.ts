import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

export type PluginSource = 'built-in' | 'path' | 'npm';

export interface PluginCandidate {
  dir: string;
  source: PluginSource;
}

const isDir = (p: string): boolean => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

const subdirs = (dir: string): string[] =>
  isDir(dir)
    ? readdirSync(dir)
        .sort()
        .map((name) => join(dir, name))
        .filter(isDir)
    : [];

/** A configured path (relative to the working directory) is a plugin folder (it has manifest.json) or a folder of plugin folders. */
function expandPath(path: string): string[] {
  if (existsSync(join(path, 'manifest.json'))) return [path];
  return subdirs(path).filter((d) => existsSync(join(d, 'manifest.json')));
}

/** npm packages whose package.json lists the keyword `certwright-plugin` (scoped ones included). */
function npmPlugins(nodeModules: string): string[] {
  const found: string[] = [];
  for (const dir of subdirs(nodeModules)) {
    const name = dir.slice(nodeModules.length + 1);
    if (name.startsWith('.')) continue;
    for (const pkgDir of name.startsWith('@') ? subdirs(dir) : [dir]) {
      try {
        const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as { keywords?: unknown };
        if (Array.isArray(pkg.keywords) && pkg.keywords.includes('certwright-plugin')) found.push(pkgDir);
      } catch {
        // Not a package (or unreadable): not a plugin.
      }
    }
  }
  return found;
}

/** Every plugin folder the kernel will look at, in load order: built-ins, configured paths, npm packages. */
export function discoverPlugins(projectRoot: string, configuredPaths: readonly string[]): PluginCandidate[] {
  const candidates: PluginCandidate[] = [];
  for (const area of ['plugins', 'connectors']) {
    for (const dir of subdirs(resolve(projectRoot, area))) candidates.push({ dir, source: 'built-in' });
  }
  for (const path of configuredPaths) {
    for (const dir of expandPath(resolve(path))) candidates.push({ dir, source: 'path' });
  }
  for (const dir of npmPlugins(resolve(projectRoot, 'node_modules'))) candidates.push({ dir, source: 'npm' });
  return candidates;
}
