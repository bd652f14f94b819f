// esbuild bundles imported stylesheets into app.css; TypeScript only needs to know the import is allowed.
declare module '*.css' {}
