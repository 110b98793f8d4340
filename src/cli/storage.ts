// `shutterbus storage set|show|clear`: a workspace's default storage (docs/storage.md). The secret is
// sealed with SECRETS_KEY before it is written, and never printed.
import type { Config } from '../config.ts';
import { checkTargetUrl } from '../net/target.ts';
import { createSealer } from '../secrets/key.ts';
import {
  changeDefaultStorage,
  defaultStorageOf,
  describeStorage,
  storageInputProblems,
} from '../workspaces/storage.ts';
import type { Workspace, WorkspaceStore } from '../workspaces/workspace.ts';
import { command, required, UsageError } from './args.ts';

/** What the storage commands need. */
export interface StorageCommandContext {
  config: Config;
  workspaces: WorkspaceStore;
}

const shown = (workspace: Workspace) => ({ workspace_id: workspace.workspace_id, storage: describeStorage(workspace) });

/** The storage commands, keyed by their command words. */
export const storageCommands = {
  'storage set': command(
    {
      workspace: { type: 'string' },
      as: { type: 'string' },
      endpoint: { type: 'string' },
      bucket: { type: 'string' },
      'access-key-id': { type: 'string' },
      'secret-access-key': { type: 'string' },
      region: { type: 'string' },
    },
    (flags) => {
      const workspaceId = required(flags.workspace, 'workspace');
      const actor = required(flags.as, 'as');
      const input = {
        endpoint: required(flags.endpoint, 'endpoint'),
        bucket: required(flags.bucket, 'bucket'),
        accessKeyId: required(flags['access-key-id'], 'access-key-id'),
        secretAccessKey: required(flags['secret-access-key'], 'secret-access-key'),
        region: flags.region,
      };
      const problem = storageInputProblems(input)[0];
      if (problem) throw new UsageError(`--${problem.parameter} ${problem.message}`);
      return { workspaceId, actor, input };
    },
    async ({ workspaceId, actor, input }, { config, workspaces }: StorageCommandContext) => {
      const workspace = await workspaces.require(workspaceId);
      // The same address rules as a request's storage_endpoint.
      await checkTargetUrl(input.endpoint, { allowPrivate: config.allowPrivateTargets, param: 'endpoint' });
      const storage = defaultStorageOf(input, createSealer(config));
      return shown(await changeDefaultStorage(workspaces, workspace.workspace_id, actor, storage));
    },
  ),
  'storage show': command(
    { workspace: { type: 'string' } },
    (flags) => required(flags.workspace, 'workspace'),
    async (workspaceId, { workspaces }: StorageCommandContext) => shown(await workspaces.require(workspaceId)),
    { readOnly: true },
  ),
  // The workspace's default storage removed, by an owner or admin (`--as`).
  'storage clear': command(
    { workspace: { type: 'string' }, as: { type: 'string' } },
    (flags) => ({ workspaceId: required(flags.workspace, 'workspace'), actor: required(flags.as, 'as') }),
    async ({ workspaceId, actor }, { workspaces }: StorageCommandContext) => {
      const workspace = await workspaces.require(workspaceId);
      return shown(await changeDefaultStorage(workspaces, workspace.workspace_id, actor, null));
    },
  ),
};
