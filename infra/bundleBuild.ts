// The build id the construct gives its tick and HTTP functions
// (WORKHORSE_BUILD): the first 12 hex digits of a digest of their code
// assets' hashes. Without it a tick registers as `<function>:$LATEST` (the
// construct publishes no versions), the same on every deploy, so the
// Workers page and the dead_worker alert could not tell the ticks of a new
// deploy from those of the old one. The asset hash is the bundle's own
// (AssetHashType.OUTPUT), so the id changes exactly when the code shipped
// changes. A WORKHORSE_BUILD given in `environment` is kept.
import { createHash } from 'node:crypto';
import { Asset } from 'aws-cdk-lib/aws-s3-assets';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';

/** The id a Function gives the Asset its AssetCode stages. */
const CODE_ASSET_ID = 'Code';

/** The build id of these functions' code, or undefined when an asset's hash cannot be read. */
export function bundleBuildId(functions: LambdaFunction[]): string | undefined {
  const hashes: string[] = [];
  for (const fn of functions) {
    const asset = fn.node.tryFindChild(CODE_ASSET_ID);
    if (!(asset instanceof Asset)) return undefined;
    hashes.push(asset.assetHash);
  }
  return createHash('sha256').update(hashes.join('\n')).digest('hex').slice(0, 12);
}
