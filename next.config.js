/** @type {import("next").NextConfig} */
const nextConfig = {
  // Typecheck and lint run in `npm test`; the build does not repeat them.
  typescript: { ignoreBuildErrors: true },
  // Node-only packages loaded at run time rather than bundled.
  serverExternalPackages: ["pg", "pino", "bcryptjs"],
  poweredByHeader: false,
};

export default nextConfig;
