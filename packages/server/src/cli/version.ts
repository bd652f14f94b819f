import serverPackage from '../../package.json' with { type: 'json' };

/** The release, as `parley --version` prints it: the server package's version (packages/server/package.json). */
export const PARLEY_VERSION: string = serverPackage.version;
